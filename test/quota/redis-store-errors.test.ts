/**
 * The quota counters' Redis paused (SIGSTOP: it takes connections and never answers): a call is
 * admitted (quotas.onStoreError allow) or refused with QUOTA_EXCEEDED and data.storeError (deny)
 * once quotas.storeTimeoutMs has passed, and the failure is counted. Stateless requests: no
 * session read, so only the quotas meet the paused Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { postStateless } from '../support/stateless.js';
import { startRedis, type RedisServer } from '../support/redis.js';

let redis: RedisServer;
let allow: RunningGateway;
let deny: RunningGateway;

const quotas = (onStoreError: string) => ({
  onStoreError,
  storeTimeoutMs: 200,
  rules: [{ name: 'daily', window: 'day', calls: 1000 }],
});

beforeAll(async () => {
  redis = await startRedis();
  const sessions = { store: 'redis', redisUrl: redis.url };
  allow = await startGateway(exampleConfig({ sessions, quotas: quotas('allow') }));
  deny = await startGateway(exampleConfig({ sessions, quotas: quotas('deny') }));
}, 60_000);

afterAll(async () => {
  redis?.resume();
  await allow?.stop();
  await deny?.stop();
  await redis?.stop();
});

const call = (gw: RunningGateway, id: number) =>
  postStateless(gw, id, 'tools/call', { name: 'echo__echo', arguments: { text: 'x' } });

const storeErrors = async (gw: RunningGateway, outcome: string) =>
  sample(await (await fetch(new URL('/metrics', gw.base))).text(), 'mcpgw_quota_store_errors_total', { outcome });

describe('quotas.onStoreError with Redis paused', () => {
  it('counts in Redis while it answers', async () => {
    expect((await call(allow, 1)).json.result).toBeDefined();
    expect((await call(deny, 1)).json.result).toBeDefined();
    expect(
      await redis.command('GET', `mcpgw:quota:{daily:${new Date().toISOString().slice(0, 10)}}:c:address:127.0.0.1`),
    ).toContain('2');
  });

  it('allow admits the call; deny refuses it with QUOTA_EXCEEDED and data.storeError; both counted', async () => {
    redis.pause();
    try {
      const admitted = await call(allow, 2);
      expect(admitted.status).toBe(200);
      expect(admitted.json.result).toBeDefined();
      const refused = await call(deny, 2);
      expect(refused.status).toBe(429);
      expect(refused.json.error.data).toMatchObject({ type: 'QUOTA_EXCEEDED', quota: 'daily', storeError: true });
    } finally {
      redis.resume();
    }
    expect(await storeErrors(allow, 'allowed')).toBe(1);
    expect(await storeErrors(deny, 'denied')).toBe(1);
  }, 20_000);
});
