/**
 * The counters' Redis paused (SIGSTOP: it takes connections and never answers): a request waits
 * no longer than rateLimits.storeTimeoutMs for its count, then is admitted (onStoreError allow)
 * or refused (deny), and the failure is counted. Stateless requests: no session read, so only
 * the rate limit meets the paused Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { postStateless } from '../support/stateless.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const STORE_TIMEOUT_MS = 300;
let redis: RedisServer;
let allow: RunningGateway;
let deny: RunningGateway;

const rateLimits = (onStoreError: string) => ({
  onStoreError,
  storeTimeoutMs: STORE_TIMEOUT_MS,
  rules: [{ name: 'per-client', match: { methods: ['tools/call'] }, limit: 1000, windowMs: 60000 }],
});

beforeAll(async () => {
  redis = await startRedis();
  const sessions = { store: 'redis', redisUrl: redis.url };
  allow = await startGateway(exampleConfig({ sessions, rateLimits: rateLimits('allow') }));
  deny = await startGateway(exampleConfig({ sessions, rateLimits: rateLimits('deny') }));
}, 60_000);

afterAll(async () => {
  redis?.resume();
  await allow?.stop();
  await deny?.stop();
  await redis?.stop();
});

const call = (gw: RunningGateway, id: number) =>
  postStateless(gw, id, 'tools/call', { name: 'echo__echo', arguments: { text: 'x' } });

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const out = await run();
  return [out, performance.now() - started];
}

describe('rateLimits.onStoreError with Redis paused', () => {
  it('counts normally while Redis answers', async () => {
    expect((await call(allow, 1)).json.result).toBeDefined();
    expect((await call(deny, 1)).json.result).toBeDefined();
    expect(await redis.command('KEYS', '*ratelimit:per-client:p:address:*')).toContain('address:127.0.0.1');
  });

  it('allow: admits the call once the store is late, within its timeout', async () => {
    redis.pause();
    try {
      const [res, ms] = await timed(() => call(allow, 2));
      expect(res.status).toBe(200);
      expect(res.json.result).toBeDefined();
      expect(ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 20);
      expect(ms).toBeLessThan(STORE_TIMEOUT_MS + 1500);
    } finally {
      redis.resume();
    }
  }, 20_000);

  it('deny: refuses it with RATE_LIMITED (data.storeError), 429, within the timeout', async () => {
    redis.pause();
    try {
      const [res, ms] = await timed(() => call(deny, 2));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.json.error.data).toMatchObject({ type: 'RATE_LIMITED', rule: 'per-client', storeError: true });
      expect(ms).toBeLessThan(STORE_TIMEOUT_MS + 1500);
    } finally {
      redis.resume();
    }
  }, 20_000);

  it('counts each failure by outcome, and counts again once Redis is back', async () => {
    const allowed = await (await fetch(new URL('/metrics', allow.base))).text();
    const denied = await (await fetch(new URL('/metrics', deny.base))).text();
    expect(sample(allowed, 'mcpgw_rate_limit_store_errors_total', { outcome: 'allowed' })).toBe(1);
    expect(sample(denied, 'mcpgw_rate_limit_store_errors_total', { outcome: 'denied' })).toBe(1);
    let res = await call(deny, 3);
    for (let i = 0; i < 50 && res.json.error; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await call(deny, 4 + i);
    }
    expect(res.json.result).toBeDefined();
  }, 20_000);
});
