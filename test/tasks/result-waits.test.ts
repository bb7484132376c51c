/**
 * tasks/result (2025-11-25) waits for its task's end: however many requests wait for one task,
 * the replica polls the store for it once (one shared wait, not one read and copy of the
 * record per waiter), and the waiters, which count against their session's in-flight share,
 * never keep that session from cancelling: its tasks/cancel goes through at the limit and
 * answers every waiter. Memory store, and Redis (a real redis-server: its command counts show
 * the reads). Real stdio upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { commandCalls, startRedis, type RedisServer } from '../support/redis.js';
import { legacySession, tasksConfig } from '../support/tasks.js';

const SHARE = 8;
const WATCH_MS = 1500;
let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
}, 30_000);

afterAll(async () => {
  await redis?.stop();
});

const stores: Array<[string, () => Record<string, unknown>]> = [
  ['memory', () => ({})],
  ['redis', () => ({ sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: 'waits:' } })],
];

describe.each(stores)('tasks/result waiters (%s store)', (name, storeConfig) => {
  let gw: RunningGateway;

  beforeAll(async () => {
    gw = await startGateway(
      tasksConfig({ limits: { maxInFlightPerClient: SHARE }, tasks: { pollIntervalMs: 100 }, ...storeConfig() }),
    );
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
  });

  it("share one wait per task, and the session's cancel goes through and answers them all", async () => {
    const session = await legacySession(gw);
    const { taskId } = (await session('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} }))
      .result.task;
    // As many waiters as the session has places: the task's own call holds one of them.
    const waiters = Array.from({ length: SHARE }, () => session('tasks/result', { taskId }));
    await new Promise((r) => setTimeout(r, 300));
    if (name === 'redis') {
      await redis.command('CONFIG', 'RESETSTAT');
      await new Promise((r) => setTimeout(r, WATCH_MS));
      // One poll every 100 ms for the task (about 15), not one per waiter (about 100).
      expect(await commandCalls(redis, 'hget')).toBeLessThanOrEqual(25);
    }

    expect(await session('tasks/cancel', { taskId })).toMatchObject({ result: { status: 'cancelled' } });
    const answers = await Promise.all(waiters);
    const waited = answers.filter((a) => a.error?.data?.type !== 'CLIENT_TOO_MANY_IN_FLIGHT');
    expect(waited.length).toBeGreaterThanOrEqual(SHARE - 1);
    for (const a of waited) expect(a.error).toMatchObject({ code: -32007 });

    // Another client is served; nothing stays held: the session's whole share serves again.
    const other = await legacySession(gw);
    expect(toolText((await other('tools/call', { name: 'greet', arguments: { name: 'other' } })).result)).toBe(
      'Hello, other!',
    );
    await untilNothingHeld(gw);
    expect(internals(gw.gateway.server).tasks).toMatchObject({ places: 0, waits: 0 });
    const again = await Promise.all(
      Array.from({ length: SHARE }, (_, i) =>
        session('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: `again ${i}` } }),
      ),
    );
    expect(again.map((r) => toolText(r.result))).toEqual(
      Array.from({ length: SHARE }, (_, i) => `again ${i}: computed for 1 s`),
    );
    await session.end();
    await other.end();
  });
});
