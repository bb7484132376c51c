/**
 * A reload of a gateway whose counters are in Redis: a rule kept by name keeps its count (the
 * same keys), a rule renamed counts afresh, and a rule added where none was makes the store then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { admitted, callsRoundRobin, openAs } from '../support/rate-limits.js';

const upstreams = [stdioUpstream('echo', ECHO_SERVER)];
const rule = (name: string) => ({ name, match: { methods: ['tools/call'] }, limit: 3, windowMs: 60000 });
const cleanups: Array<() => Promise<void>> = [];
let redis: RedisServer;
let gw: Awaited<ReturnType<typeof startFromFile>>;
let sessions: Record<string, unknown>;

beforeAll(async () => {
  redis = await startRedis();
  sessions = { store: 'redis', redisUrl: redis.url };
  gw = await startFromFile({ upstreams, sessions }, cleanups);
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await redis?.stop();
});

const reload = async (rules: unknown[]) => {
  gw.file.write({ upstreams, sessions, rateLimits: { rules } });
  expect((await gw.gateway.reload()).outcome).toBe('ok');
};

describe('reloading rules counted in Redis', () => {
  it('adds rules where none were, keeps a kept rule count, and a renamed one counts afresh', async () => {
    const sid = await openAs(gw.url);
    expect(admitted(await callsRoundRobin([gw.url], sid, 5))).toBe(5); // no rule yet
    await reload([rule('first')]);
    expect(admitted(await callsRoundRobin([gw.url], sid, 2))).toBe(2);
    await reload([rule('first'), { ...rule('other'), match: { methods: ['ping'] } }]);
    expect(admitted(await callsRoundRobin([gw.url], sid, 3))).toBe(1);
    await reload([rule('renamed')]);
    expect(admitted(await callsRoundRobin([gw.url], sid, 4))).toBe(3);
    expect(await redis.command('KEYS', '*ratelimit:renamed:*')).toContain('renamed:p:address:');
  }, 30_000);
});
