/**
 * request.log is made only when a request logs (server/lazy-request-logger.ts): the lines it
 * writes are those pino's eager child would, with the request's bindings, and a request that
 * logs nothing at the configured level makes no child at all.
 */
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { lazyChildLoggerFactory } from '../../src/server/lazy-request-logger.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = createLogger(level, sink);
  return { log, lines };
}

const make = (log: FastifyBaseLogger, bindings: Record<string, unknown>, options: Record<string, unknown> = {}) =>
  lazyChildLoggerFactory.call(undefined as never, log, bindings, options, undefined as never);

describe('lazy request logger', () => {
  it('writes what the eager child writes, bindings and redaction included', async () => {
    const { log, lines } = capture('info');
    const lazy = make(log, { reqId: 'r-1' });
    const eager = log.child({ reqId: 'r-1' });
    lazy.info({ headers: { authorization: 'Bearer x' }, n: 1 }, 'hello');
    eager.info({ headers: { authorization: 'Bearer x' }, n: 1 }, 'hello');
    lazy.error(new Error('boom'));
    eager.error(new Error('boom'));
    await new Promise((r) => setImmediate(r));
    const strip = (l: Record<string, unknown>) => ({
      ...l,
      time: 0,
      err: l.err ? { ...(l.err as object), stack: '' } : undefined,
    });
    expect(lines).toHaveLength(4);
    expect(strip(lines[0]!)).toEqual(strip(lines[1]!));
    expect(strip(lines[2]!)).toEqual(strip(lines[3]!));
    expect(lines[0]).toMatchObject({ reqId: 'r-1', n: 1, msg: 'hello', headers: { authorization: '[redacted]' } });
  });

  it('below the level: nothing written, no child made; the parent level is read at each call', async () => {
    const { log, lines } = capture('warn');
    const child = vi.spyOn(log, 'child');
    const lazy = make(log, { reqId: 'r-2' });
    lazy.info('quiet');
    lazy.debug('quieter');
    expect((lazy as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled('info')).toBe(false);
    expect(child).not.toHaveBeenCalled();
    log.level = 'info';
    lazy.info('now heard');
    await new Promise((r) => setImmediate(r));
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r-2', msg: 'now heard', level: 30 })]);
    expect(lazy.level).toBe('info');
  });

  it('a route with logger options of its own gets pino child at once', () => {
    const { log } = capture('warn');
    const made = make(log, { reqId: 'r-3' }, { level: 'debug' });
    expect(made.level).toBe('debug');
    expect((made as unknown as { bindings(): Record<string, unknown> }).bindings()).toMatchObject({ reqId: 'r-3' });
  });
});
