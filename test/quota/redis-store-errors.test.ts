/**
 * The quota counters' Redis paused (SIGSTOP: it takes connections and never answers): a call is
 * admitted (quotas.onStoreError allow) or refused with QUOTA_EXCEEDED and data.storeError (deny)
 * once quotas.storeTimeoutMs has passed, and the failure is counted. Stateless requests: no
 * session read, so only the quotas meet the paused Redis.
 */
import { describe, expect, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import { pausedRedisPair } from '../support/paused-redis.js';

const pair = pausedRedisPair((onStoreError) => ({
  quotas: { onStoreError, storeTimeoutMs: 200, rules: [{ name: 'daily', window: 'day', calls: 1000 }] },
}));

const storeErrors = async (gw: RunningGateway, outcome: string) =>
  sample(await (await fetch(new URL('/metrics', gw.base))).text(), 'mcpgw_quota_store_errors_total', { outcome });

describe('quotas.onStoreError with Redis paused', () => {
  it('counts in Redis while it answers', async () => {
    expect((await pair.call(pair.allow, 1)).json.result).toBeDefined();
    expect((await pair.call(pair.deny, 1)).json.result).toBeDefined();
    expect(
      await pair.redis.command(
        'GET',
        `mcpgw:quota:{daily:${new Date().toISOString().slice(0, 10)}}:c:address:127.0.0.1`,
      ),
    ).toContain('2');
  });

  it('allow admits the call; deny refuses it with QUOTA_EXCEEDED and data.storeError; both counted', async () => {
    await pair.whilePaused(async () => {
      const admitted = await pair.call(pair.allow, 2);
      expect(admitted.status).toBe(200);
      expect(admitted.json.result).toBeDefined();
      const refused = await pair.call(pair.deny, 2);
      expect(refused.status).toBe(429);
      expect(refused.json.error.data).toMatchObject({ type: 'QUOTA_EXCEEDED', quota: 'daily', storeError: true });
    });
    expect(await storeErrors(pair.allow, 'allowed')).toBe(1);
    expect(await storeErrors(pair.deny, 'denied')).toBe(1);
  }, 20_000);
});
