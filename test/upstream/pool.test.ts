/**
 * UpstreamPool as a module: a shared pool of real stdio workers (the held server, whose calls
 * answer only once the test releases their key, so "in flight" lasts exactly as long as a check
 * needs). Least-in-flight selection, growth up to `max` when every slot is taken, the bounded
 * queue (full: OVERLOADED at once; waited too long: OVERLOADED), a cancelled queued call that
 * never reaches a worker, growth on a stall (its timer fired early; its new worker failed to start), a dead
 * worker replaced, and close().
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { LogThrottle } from '../../src/observability/log-throttle.js';
import { UpstreamPool } from '../../src/upstream/pool.js';
import { StdioUpstream } from '../../src/upstream/wires/stdio.js';
import { isAlive } from '../support/gateway.js';
import { heldServer } from '../support/held-server.js';
import {
  GATEWAY_IDENTITY,
  quietLog,
  quietPeer,
  recordEvents,
  stdioConfig,
  type RecordedEvents,
} from '../support/in-process.js';
import { until } from '../support/wait.js';

const held = heldServer();
const log = quietLog();
let pool: UpstreamPool | undefined;
let events: RecordedEvents | undefined;

/**
 * A pool of the held server with `pool` settings; `workers` are the workers it created, in order. A worker whose
 * index `failsToStart` names runs a process that exits at once instead.
 */
function heldPool(
  settings: Record<string, unknown>,
  failsToStart: (index: number) => boolean = () => false,
): { pool: UpstreamPool; workers: StdioUpstream[] } {
  const upstream = { name: 'held', transport: 'stdio', pool: { idleTimeoutMs: 60_000, ...settings } };
  const config = stdioConfig({ ...upstream, command: held.command, args: held.args });
  const exits = stdioConfig({ ...upstream, command: process.execPath, args: ['-e', 'process.exit(3)'] });
  events = recordEvents(['pool:rejection', 'upstream:restart', 'pool:queue']);
  const workers: StdioUpstream[] = [];
  const diagnostics = events.diagnostics;
  pool = new UpstreamPool(
    'held',
    config.pool,
    (i) => {
      const w = new StdioUpstream(failsToStart(i) ? exits : config, GATEWAY_IDENTITY, log, i, quietPeer(), {
        diagnostics,
        throttle: new LogThrottle(),
      });
      workers.push(w);
      return w;
    },
    log,
    diagnostics,
  );
  return { pool, workers };
}

const hold = (p: UpstreamPool, key: string) => p.call('tools/call', { name: 'hold', arguments: { key } });
const text = (r: Record<string, unknown>) => (r.content as Array<{ text: string }>)[0]!.text;

afterEach(async () => {
  await pool?.close();
  pool = undefined;
  events?.stop();
});

afterAll(() => held.remove());

describe('UpstreamPool', () => {
  it('starts `min` workers and gives each call to the least busy one', async () => {
    const { pool, workers } = heldPool({ min: 2, max: 2, maxInFlight: 4 });
    await pool.start();
    expect(pool.status()).toMatchObject({ state: 'ready', workers: 2, ready: 2, inFlight: 0, queued: 0 });
    const a = hold(pool, 'least-a');
    const b = hold(pool, 'least-b');
    // Two idle workers: the second call goes to the one the first did not take.
    expect(workers.map((w) => w.inFlight)).toEqual([1, 1]);
    const c = hold(pool, 'least-c');
    expect(workers.map((w) => w.inFlight).sort()).toEqual([1, 2]);
    for (const k of ['least-a', 'least-b', 'least-c']) held.release(k);
    expect((await Promise.all([a.promise, b.promise, c.promise])).map(text)).toEqual([
      'released least-a',
      'released least-b',
      'released least-c',
    ]);
    expect(pool.status().inFlight).toBe(0);
  });

  it('grows to `max` when every slot is taken, then queues, then refuses at once with OVERLOADED', async () => {
    const { pool, workers } = heldPool({ min: 1, max: 2, maxInFlight: 1, queueSize: 1, queueTimeoutMs: 30_000 });
    await pool.start();
    expect(workers).toHaveLength(1);
    // Its only slot taken, a second worker starts at once, before any call has to wait.
    const a = hold(pool, 'grow-a');
    expect(workers).toHaveLength(2);
    const b = hold(pool, 'grow-b');
    await until(
      'the second worker took the queued call',
      () => pool.status().ready === 2 && pool.status().queued === 0,
    );
    expect(workers.map((w) => w.inFlight)).toEqual([1, 1]);
    // At max, every slot taken: the queue takes one call, and refuses the next without waiting.
    const c = hold(pool, 'grow-c');
    expect(pool.status().queued).toBe(1);
    const d = hold(pool, 'grow-d');
    const refused = await d.promise.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ type: 'OVERLOADED', message: expect.stringMatching(/queue is full/) });
    expect((refused as GatewayError).detail).toMatchObject({ retryAfterMs: expect.any(Number) });
    expect(events!.of('pool:rejection')).toEqual([expect.objectContaining({ upstream: 'held', reason: 'queue_full' })]);
    expect(workers).toHaveLength(2);
    // A freed slot takes the queued call.
    held.release('grow-a');
    expect(text(await a.promise)).toBe('released grow-a');
    await until('the queued call was dispatched', () => pool.status().queued === 0);
    held.release('grow-b');
    held.release('grow-c');
    expect((await Promise.all([b.promise, c.promise])).map(text)).toEqual(['released grow-b', 'released grow-c']);
  });

  it('fails a queued call with OVERLOADED once it has waited queueTimeoutMs', async () => {
    const { pool } = heldPool({ min: 1, max: 1, maxInFlight: 1, queueSize: 4, queueTimeoutMs: 200 });
    await pool.start();
    const a = hold(pool, 'wait-a');
    const b = hold(pool, 'wait-b');
    expect(pool.status().queued).toBe(1);
    await expect(b.promise).rejects.toMatchObject({
      type: 'OVERLOADED',
      message: expect.stringMatching(/no worker free within 200 ms/),
    });
    expect(pool.status().queued).toBe(0);
    expect(events!.of('pool:rejection')).toEqual([expect.objectContaining({ reason: 'queue_timeout' })]);
    held.release('wait-a');
    expect(text(await a.promise)).toBe('released wait-a');
  });

  it('a queued call cancelled while it waits never reaches a worker', async () => {
    const { pool, workers } = heldPool({ min: 1, max: 1, maxInFlight: 1, queueSize: 4, queueTimeoutMs: 30_000 });
    await pool.start();
    const a = hold(pool, 'cancel-a');
    const b = hold(pool, 'cancel-b');
    expect(pool.status().queued).toBe(1);
    b.cancel(new GatewayError('REQUEST_CANCELLED', 'gone'));
    await expect(b.promise).rejects.toMatchObject({ type: 'REQUEST_CANCELLED', message: 'gone' });
    expect(pool.status().queued).toBe(0);
    held.release('cancel-a');
    await a.promise;
    // Had it been dispatched it would hold its worker now: cancel-b is never released.
    await until('the worker is idle', () => pool.status().inFlight === 0);
    expect(workers[0]!.inFlight).toBe(0);
  });

  it('a stall timer that fires a millisecond early still grows the pool once the worker is stalled', async () => {
    const { pool } = heldPool({ min: 1, max: 2, maxInFlight: 4, busyAfterMs: 300 });
    await pool.start();
    // Only the pool's timers and clock are fake: the workers' pipes stay real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const stalledAt = Date.now() + 300;
      const a = hold(pool, 'early-a');
      // Node runs timers on the loop's cached clock, so the timer may read a clock just short of its
      // moment, and the clock may tick before a second read: the timer must act on one reading.
      vi.spyOn(Date, 'now').mockImplementationOnce(() => stalledAt - 1);
      vi.advanceTimersByTime(300);
      expect(pool.status().workers).toBe(1);
      vi.advanceTimersByTime(1);
      expect(pool.status().workers).toBe(2);
      vi.useRealTimers();
      await until('the second worker is ready', () => pool.status().ready === 2);
      held.release('early-a');
      expect(text(await a.promise)).toBe('released early-a');
    } finally {
      vi.useRealTimers();
      vi.restoreAllMocks();
    }
  });

  it('a worker started for a stall that fails to start is tried again while the stall lasts', async () => {
    const { pool, workers } = heldPool({ min: 1, max: 2, maxInFlight: 4, busyAfterMs: 100 }, (i) => i === 1);
    await pool.start();
    const a = hold(pool, 'regrow-a');
    // No other call comes: only the pool itself can notice that the stall still needs another worker.
    await until('a third worker, after the second failed to start', () => pool.status().ready === 2);
    expect(workers.length).toBe(3);
    const b = hold(pool, 'regrow-b');
    held.release('regrow-b');
    expect(text(await b.promise)).toBe('released regrow-b');
    held.release('regrow-a');
    expect(text(await a.promise)).toBe('released regrow-a');
  });

  it('replaces a worker that dies, and its call in flight fails', async () => {
    // No stall watch: only the restart can bring a worker back.
    const { pool, workers } = heldPool({ min: 1, max: 1, maxInFlight: 4, busyAfterMs: 0 });
    await pool.start();
    const first = workers[0]!;
    const pid = first.pid!;
    const lost = hold(pool, 'dies');
    process.kill(pid, 'SIGKILL');
    await expect(lost.promise).rejects.toBeInstanceOf(Error);
    await until('a new worker is ready', () => workers.length === 2 && pool.status().ready === 1, 15_000);
    expect(events!.of('upstream:restart')).toEqual([expect.objectContaining({ upstream: 'held' })]);
    expect(workers[1]!.pid).not.toBe(pid);
    const after = hold(pool, 'after-restart');
    held.release('after-restart');
    expect(text(await after.promise)).toBe('released after-restart');
  });

  it('close() fails queued calls and later ones with SHUTTING_DOWN and stops every worker', async () => {
    const { pool, workers } = heldPool({ min: 1, max: 1, maxInFlight: 1, queueSize: 4, queueTimeoutMs: 30_000 });
    await pool.start();
    const pid = workers[0]!.pid!;
    const a = hold(pool, 'close-a');
    const b = hold(pool, 'close-b');
    const [aFailed, bFailed] = [a, b].map((c) => c.promise.catch((e: unknown) => e));
    await pool.close();
    expect(await bFailed).toMatchObject({ type: 'SHUTTING_DOWN' });
    expect(await aFailed).toBeInstanceOf(Error);
    await expect(hold(pool, 'close-c').promise).rejects.toMatchObject({ type: 'SHUTTING_DOWN' });
    expect(pool.status()).toMatchObject({ state: 'closed', workers: 0, queued: 0 });
    await until('the worker process exited', () => !isAlive(pid));
  });
});
