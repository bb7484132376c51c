/**
 * Seeing what a stdio upstream itself received and sent: a preload (`--import`) that appends
 * every JSON-RPC line to a file, for tests that check what reached the upstream process.
 */
import { fileLines } from './file-lines.js';

/**
 * A preload for the slow server that records, in order, every line it reads from stdin
 * ("IN ...") and writes to stdout ("OUT ..."), so the test can see what the upstream got.
 * It hooks emit/write instead of adding listeners, so it changes nothing about the flow.
 */
const TAP = `
import { appendFileSync } from 'node:fs';
const file = process.env.MCPGW_TAP;
const buffers = { IN: '', OUT: '' };
function record(dir, chunk) {
  buffers[dir] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  let nl;
  while ((nl = buffers[dir].indexOf('\\n')) !== -1) {
    const line = buffers[dir].slice(0, nl);
    buffers[dir] = buffers[dir].slice(nl + 1);
    if (line.trim()) appendFileSync(file, dir + ' ' + line + '\\n');
  }
}
const emit = process.stdin.emit;
process.stdin.emit = function (event, ...args) {
  if (event === 'data') record('IN', args[0]);
  return emit.call(this, event, ...args);
};
const write = process.stdout.write;
process.stdout.write = function (chunk, ...rest) {
  record('OUT', chunk);
  return write.call(this, chunk, ...rest);
};
`;

export function readTap(file: string): Array<{ dir: 'IN' | 'OUT'; message: any }> {
  return fileLines(file).map((line) => {
    const space = line.indexOf(' ');
    return { dir: line.slice(0, space) as 'IN' | 'OUT', message: JSON.parse(line.slice(space + 1)) };
  });
}

/** `args` and `env` for a stdio upstream running `script` with the tap writing to `file`. */
export function tappedStdio(script: string, file: string): { args: string[]; env: Record<string, string> } {
  return { args: ['--import', `data:text/javascript,${encodeURIComponent(TAP)}`, script], env: { MCPGW_TAP: file } };
}
