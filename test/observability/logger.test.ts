/**
 * The gateway's default log destination (observability/logger.ts), in a real child process
 * writing to a pipe: the lines of a turn go out together after it, in order, every line whole;
 * and lines still waiting when the process exits (process.exit in the same turn) are written.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/gateway.js';

const LOGGER = resolve(ROOT, 'dist/observability/logger.js');

/** Runs `body` as an ES module with `createLogger` imported from the build; its stdout, split in lines. */
async function run(body: string): Promise<{ code: number | null; lines: Array<Record<string, unknown>> }> {
  const script = `import { createLogger } from ${JSON.stringify(LOGGER)};\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
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
});
