#!/usr/bin/env node
// @ts-check
// µs of CPU per access line, in process, through a built checkout's createLogger (its default
// destination, writing to /dev/null through fd 1 of this process: run with `> /dev/null`), 50
// lines per event-loop turn as under load. Two ways to write the line: as a request's child
// logger with the logger's redaction (what server/access-log.ts did before 29ba582), and through
// one child without redaction, the request id a field (what it does since). A component figure
// beside the bench's call-traced info rows, not a replacement for them.
//
//   node load/tools/log-line-cost.mjs [--root <built checkout>] > /dev/null    (results on stderr)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const i = args.indexOf('--root');
const root = resolve(i === -1 ? '.' : /** @type {string} */ (args[i + 1]));
const { createLogger } = await import(pathToFileURL(resolve(root, 'dist/observability/logger.js')).href);
const log = createLogger('info');
const unredacted = log.child({}, { redact: { paths: [] } });
const fields = { method: 'POST', path: '/mcp', status: 200, data: { type: 'request', method: 'tools/call' } };

/** @type {Record<string, (n: number) => void>} */
const ways = {
  'request child, redacted': (n) => log.child({ reqId: `req-${n}` }).info({ ...fields, durationMs: 1.2 }, 'access'),
  'one child, unredacted': (n) => unredacted.info({ reqId: `req-${n}`, ...fields, durationMs: 1.2 }, 'access'),
};

const PER_TURN = 50;
const TURNS = 4000;
/** @param {(n: number) => void} line @returns {Promise<number>} µs per line over the last 3/4 of the turns */
function measure(line) {
  return new Promise((done) => {
    let turn = 0;
    let from = 0n;
    const step = () => {
      if (turn === TURNS / 4) from = process.hrtime.bigint();
      for (let k = 0; k < PER_TURN; k++) line(turn * PER_TURN + k);
      if (++turn < TURNS) setImmediate(step);
      else setImmediate(() => done(Number(process.hrtime.bigint() - from) / 1000 / ((TURNS * 3) / 4) / PER_TURN));
    };
    step();
  });
}

for (let round = 1; round <= 3; round++)
  for (const [way, line] of Object.entries(ways))
    process.stderr.write(`${root}: ${way}, round ${round}: ${(await measure(line)).toFixed(2)} µs per line\n`);
