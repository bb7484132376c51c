/**
 * Three replicas on one Redis, each request to the next replica: a rule's count is one count
 * across them (the Lua counter in Redis), refusals are typed and say when to come back, another
 * principal has counters of its own, and a window rolls over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { admitted, apiKeyAuth, callsRoundRobin, openAs, refused } from '../support/rate-limits.js';

let redis: RedisServer;
let replicas: RunningGateway[];
const urls = () => replicas.map((r) => r.url);

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(3, {
    sessions: { redisUrl: redis.url },
    auth: apiKeyAuth(['alice', 'bob', 'carol']),
    rateLimits: {
      rules: [
        { name: 'calls-per-minute', match: { methods: ['tools/call'] }, key: 'principal', limit: 100, windowMs: 60000 },
        { name: 'carol-short', match: { principals: ['carol'] }, limit: 5, windowMs: 2000 },
      ],
    },
  });
}, 60_000);

afterAll(async () => {
  await Promise.all((replicas ?? []).map((r) => r.stop()));
  await redis?.stop();
});

describe('a rule of 100 per minute per principal, across 3 replicas', () => {
  it('admits exactly 100 of 110 round-robin calls, then refuses with RATE_LIMITED, 429 and Retry-After', async () => {
    const sid = await openAs(replicas[0]!.url, 'alice');
    const started = Date.now();
    const outcomes = await callsRoundRobin(urls(), sid, 110, 'alice');
    const elapsed = Date.now() - started;
    expect(admitted(outcomes)).toBe(100);
    // The first 100 admitted, every one after refused: no replica counted on its own.
    expect(outcomes.slice(0, 100).every((o) => o.result !== undefined)).toBe(true);
    const no = refused(outcomes);
    expect(no).toHaveLength(10);
    for (const o of no) {
      expect(o.status).toBe(429);
      expect(o.error!.code).toBe(-32015);
      expect(o.error!.data).toMatchObject({ type: 'RATE_LIMITED', retryable: true, rule: 'calls-per-minute' });
      // The window's end, as Redis counts it from the first call: at most a minute, less what passed since.
      const wait = o.error!.data!.retryAfterMs!;
      expect(wait).toBeGreaterThan(60000 - elapsed - 1000);
      expect(wait).toBeLessThanOrEqual(60000);
      expect(Number(o.retryAfter)).toBe(Math.ceil(wait / 1000));
    }
  }, 60_000);

  it('leaves a second principal its own count', async () => {
    const sid = await openAs(replicas[1]!.url, 'bob');
    const outcomes = await callsRoundRobin(urls(), sid, 20, 'bob');
    expect(admitted(outcomes)).toBe(20);
  });

  it('counts the refusals by rule, on the replica that refused', async () => {
    const texts = await Promise.all(replicas.map(async (r) => (await fetch(new URL('/metrics', r.base))).text()));
    const total = texts.reduce((n, t) => n + sample(t, 'mcpgw_rate_limited_total', { rule: 'calls-per-minute' }), 0);
    expect(total).toBe(10);
  });

  it('rolls the window over: a 2 s rule admits again after its retryAfterMs', async () => {
    const sid = await openAs(replicas[2]!.url, 'carol');
    // Five admitted, counted from the first: the rule counts every method, and initialized is a notification.
    const first = await callsRoundRobin(urls(), sid, 6, 'carol');
    expect(admitted(first)).toBe(5);
    const wait = first[5]!.error!.data!.retryAfterMs!;
    expect(first[5]!.error!.data!.rule).toBe('carol-short');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(2000);
    await new Promise((r) => setTimeout(r, wait + 50));
    const after = await callsRoundRobin(urls(), sid, 6, 'carol');
    expect(admitted(after)).toBe(5);
    expect(refused(after)).toHaveLength(1);
  }, 30_000);

  it('keeps one hash per counter in Redis, expiring with its window', async () => {
    const keys = await redis.command('KEYS', '*ratelimit:*');
    expect(keys).toContain('calls-per-minute:p:alice');
    const ttl = await redis.command(
      'PTTL',
      keys.split('\r\n').find((l) => l.includes('calls-per-minute:p:alice'))!,
    );
    const ms = Number(ttl.slice(1));
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(60000);
  });
});
