/**
 * The counters' Redis paused (SIGSTOP: it takes connections and never answers): a request waits
 * no longer than rateLimits.storeTimeoutMs for its count, then is admitted (onStoreError allow)
 * or refused (deny), and the failure is counted. Stateless requests: no session read, so only
 * the rate limit meets the paused Redis.
 */
import { describe, expect, it } from 'vitest';
import { sample } from '../support/metrics.js';
import { pausedRedisPair } from '../support/paused-redis.js';

const STORE_TIMEOUT_MS = 300;

const pair = pausedRedisPair((onStoreError) => ({
  rateLimits: {
    onStoreError,
    storeTimeoutMs: STORE_TIMEOUT_MS,
    rules: [{ name: 'per-client', match: { methods: ['tools/call'] }, limit: 1000, windowMs: 60000 }],
  },
}));

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const out = await run();
  return [out, performance.now() - started];
}

describe('rateLimits.onStoreError with Redis paused', () => {
  it('counts normally while Redis answers', async () => {
    expect((await pair.call(pair.allow, 1)).json.result).toBeDefined();
    expect((await pair.call(pair.deny, 1)).json.result).toBeDefined();
    expect(await pair.redis.command('KEYS', '*ratelimit:per-client:p:address:*')).toContain('address:127.0.0.1');
  });

  it('allow: admits the call once the store is late, within its timeout', async () => {
    const [res, ms] = await pair.whilePaused(() => timed(() => pair.call(pair.allow, 2)));
    expect(res.status).toBe(200);
    expect(res.json.result).toBeDefined();
    expect(ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 20);
    expect(ms).toBeLessThan(STORE_TIMEOUT_MS + 1500);
  }, 20_000);

  it('deny: refuses it with RATE_LIMITED (data.storeError), 429, within the timeout', async () => {
    const [res, ms] = await pair.whilePaused(() => timed(() => pair.call(pair.deny, 2)));
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.json.error.data).toMatchObject({ type: 'RATE_LIMITED', rule: 'per-client', storeError: true });
    expect(ms).toBeLessThan(STORE_TIMEOUT_MS + 1500);
  }, 20_000);

  it('counts each failure by outcome, and counts again once Redis is back', async () => {
    const allowed = await (await fetch(new URL('/metrics', pair.allow.base))).text();
    const denied = await (await fetch(new URL('/metrics', pair.deny.base))).text();
    expect(sample(allowed, 'mcpgw_rate_limit_store_errors_total', { outcome: 'allowed' })).toBe(1);
    expect(sample(denied, 'mcpgw_rate_limit_store_errors_total', { outcome: 'denied' })).toBe(1);
    let res = await pair.call(pair.deny, 3);
    for (let i = 0; i < 50 && res.json.error; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await pair.call(pair.deny, 4 + i);
    }
    expect(res.json.result).toBeDefined();
  }, 20_000);
});
