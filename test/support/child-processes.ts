import { readFileSync, readdirSync } from 'node:fs';
import { fileLines } from './file-lines.js';

/** Direct children of a process (from /proc), e.g. a gateway's upstream workers. */
export function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) kids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return kids;
}

/** Pids (ascending) of this test process's own children whose command line contains `script`. */
export function childPidsRunning(script: string): number[] {
  return childrenOf(process.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(script);
      } catch {
        return false; // gone meanwhile
      }
    })
    .sort((a, b) => a - b);
}

/**
 * A preload (`--import`) that writes `start <pid>` to $MCPGW_STARTS as the process starts, and
 * `init <pid> <clientInfo.name>` when it reads its initialize request: every start is counted,
 * however short its life (sampling /proc would miss a process that came and went between two
 * looks), and a gateway's probe (clientInfo mcp-gateway) is told apart from a client's worker.
 */
const STARTS = `
import { appendFileSync } from 'node:fs';
const file = process.env.MCPGW_STARTS;
appendFileSync(file, 'start ' + process.pid + '\\n');
let buf = '';
const emit = process.stdin.emit;
process.stdin.emit = function (event, ...args) {
  if (event === 'data' && buf !== undefined) {
    buf += String(args[0]);
    const nl = buf.indexOf('\\n');
    if (nl !== -1) {
      try {
        const m = JSON.parse(buf.slice(0, nl));
        if (m.method === 'initialize') appendFileSync(file, 'init ' + process.pid + ' ' + m.params.clientInfo.name + '\\n');
      } catch {}
      buf = undefined;
    }
  }
  return emit.call(this, event, ...args);
};
`;

/** `args` and `env` for a stdio upstream running `script` (then `scriptArgs`) with STARTS writing to `file`. */
export function countedStarts(
  script: string,
  file: string,
  scriptArgs: string[] = [],
): { args: string[]; env: Record<string, string> } {
  return {
    args: ['--import', `data:text/javascript,${encodeURIComponent(STARTS)}`, script, ...scriptArgs],
    env: { MCPGW_STARTS: file },
  };
}

/** What STARTS wrote to `file`: processes started, and those initialized by a client named `client`. */
export function startsIn(file: string): { started: number; initializedBy(client: string): number } {
  const lines = fileLines(file);
  return {
    started: lines.filter((l) => l.startsWith('start ')).length,
    initializedBy: (client) => lines.filter((l) => l.startsWith('init ') && l.split(' ')[2] === client).length,
  };
}
