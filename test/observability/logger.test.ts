/**
 * The gateway's default log destination (observability/logger.ts), in a real child process
 * writing to a pipe: the lines of a turn go out together after it, in order, every line whole;
 * lines still waiting when the process exits (process.exit in the same turn) are written; and
 * behind a reader that stops, what is held unwritten is bounded: lines past the bound are dropped,
 * and every dropped line is counted in a notice written once there is room.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/gateway.js';

const LOGGER = resolve(ROOT, 'dist/observability/logger.js');

/** Runs `body` as an ES module with `createLogger` imported from the build; its stdout, split in lines. */
async function run(
  body: string,
  readFromStart = true,
): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  const script = `import { createLogger } from ${JSON.stringify(LOGGER)};\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const read = () => child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  // Not reading: the pipe fills and the child's writes wait, until it says 'produced' on stderr.
  if (readFromStart) read();
  else child.stderr.on('data', (c: Buffer) => c.toString().includes('produced') && read());
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  const lines = out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, lines };
}

describe('the default log destination', () => {
  it('writes every line, whole and in order, across many turns', async () => {
    const { code, lines } = await run(`
      const log = createLogger('info');
      let n = 0;
      const turn = () => {
        for (let i = 0; i < 50; i++) log.info({ n: n++, pad: 'x'.repeat(n % 700) }, 'line');
        if (n < 5000) setImmediate(turn);
      };
      turn();
    `);
    expect(code).toBe(0);
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });

  it('writes what is still waiting when the process exits in the same turn', async () => {
    const { code, lines } = await run(`
      const log = createLogger('info');
      for (let i = 0; i < 3; i++) log.info({ n: i }, 'before exit');
      // Not fatal: pino flushes a fatal line at once.
      log.error({ user: { token: 'secret' } }, 'stopping');
      process.exit(3);
    `);
    expect(code).toBe(3);
    expect(lines.map((l) => l.msg)).toEqual(['before exit', 'before exit', 'before exit', 'stopping']);
    // Redaction still applies to what the exit writes.
    expect(lines[3]).toMatchObject({ level: 50, user: { token: '[redacted]' } });
  });

  it('holds at most the bound behind a reader that stops, and counts every line it drops', async () => {
    const { code, lines } = await run(
      `
      const log = createLogger('info');
      const pad = 'x'.repeat(1000);
      let bulk = 0;
      let ticks = 0;
      // 100 MB of lines while nobody reads: more than the 64 MiB bound.
      const produce = () => {
        for (let i = 0; i < 100; i++) log.info({ pad, n: bulk++ }, 'bulk');
        if (bulk < 100000) setImmediate(produce);
        else {
          process.stderr.write('produced\\n');
          const tick = setInterval(() => log.info({ n: ticks++ }, 'tick'), 20);
          setTimeout(() => {
            clearInterval(tick);
            log.info({ bulk, ticks }, 'done');
          }, 3000);
        }
      };
      produce();
    `,
      false,
    );
    expect(code).toBe(0);
    const count = (msg: string) => lines.filter((l) => l.msg === msg).length;
    const notices = lines.filter((l) => l.msg === 'log lines dropped: stdout fell behind');
    const dropped = notices.reduce((sum, l) => sum + (l.dropped as number), 0);
    const done = lines.find((l) => l.msg === 'done')!;
    expect(notices.length).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThan(0);
    // Nothing lost uncounted: what arrived and what the notices count are every line logged.
    expect(count('bulk') + count('tick') + dropped).toBe((done.bulk as number) + (done.ticks as number));
  }, 30_000);
});
