/**
 * Three replicas on one Redis, each call to the next replica: a quota of N calls a day is one
 * count across them (the Lua admission in Redis), refused with the typed QUOTA_EXCEEDED (429 and
 * Retry-After as a POST's only message) until 00:00 UTC, a second principal has a count of its
 * own, a gateway started again finds the counts, a call's time upstream is counted as it ends,
 * and /status.json on any replica shows the same top consumers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { sample } from '../support/metrics.js';
import {
  admitted,
  apiKeyAuth,
  bearer,
  callsRoundRobin,
  keyOf,
  openAs,
  sessionHeaders,
  type CallOutcome,
} from '../support/rate-limits.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
let replicas: RunningGateway[];
const urls = () => replicas.map((r) => r.url);

const config = () => ({
  sessions: { redisUrl: redis.url },
  auth: apiKeyAuth(['alice', 'bob', 'carol']),
  status: { principals: ['alice'] },
  quotas: {
    rules: [
      { name: 'echo-calls', window: 'day', calls: 10, match: { tools: ['echo__*'] } },
      { name: 'slow-time', window: 'month', upstreamSeconds: 0.5, match: { servers: ['slow'] } },
    ],
  },
});

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(3, config());
}, 60_000);

afterAll(async () => {
  await Promise.all((replicas ?? []).map((r) => r.stop()));
  await redis?.stop();
});

const quotaRefused = (outcomes: readonly CallOutcome[]) =>
  outcomes.filter((o) => o.error?.data?.type === 'QUOTA_EXCEEDED');

interface QuotaRow {
  name: string;
  window: string;
  resetAt: string;
  measures: Array<{ measure: string; limit: number; top: Array<{ principal: string; used: number }> }>;
}

async function statusQuotas(r: RunningGateway): Promise<QuotaRow[]> {
  const res = await fetch(`${r.base}/status.json`, { headers: bearer(keyOf('alice')) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { quotas: QuotaRow[] }).quotas;
}

const nextMidnight = () => {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
};

describe('a quota of 10 calls a day, across 3 replicas', () => {
  it('admits exactly 10 of 13 round-robin calls, then refuses with QUOTA_EXCEEDED, 429 and Retry-After', async () => {
    const sid = await openAs(replicas[0]!.url, 'alice');
    const outcomes = await callsRoundRobin(urls(), sid, 13, 'alice');
    expect(admitted(outcomes)).toBe(10);
    expect(outcomes.slice(0, 10).every((o) => o.result !== undefined)).toBe(true);
    const no = quotaRefused(outcomes);
    expect(no).toHaveLength(3);
    const midnight = nextMidnight();
    for (const o of no) {
      expect(o.status).toBe(429);
      expect(o.error!.code).toBe(-32015);
      const data = o.error!.data as Record<string, unknown>;
      expect(data).toMatchObject({ type: 'QUOTA_EXCEEDED', retryable: true, quota: 'echo-calls', measure: 'calls' });
      expect(data.limit).toBe(10);
      expect(data.resetAt).toBe(new Date(midnight).toISOString());
      const wait = data.retryAfterMs as number;
      expect(Math.abs(Date.now() + wait - midnight)).toBeLessThan(5000);
      expect(Number(o.retryAfter)).toBe(Math.max(1, Math.ceil(wait / 1000)));
    }
  }, 60_000);

  it('leaves a second principal its own count', async () => {
    const sid = await openAs(replicas[1]!.url, 'bob');
    expect(admitted(await callsRoundRobin(urls(), sid, 6, 'bob'))).toBe(6);
  });

  it('keeps the counts in Redis when a gateway is started again', async () => {
    await replicas[0]!.stop();
    replicas[0] = await startGateway(exampleConfig({ ...config(), sessions: { store: 'redis', redisUrl: redis.url } }));
    const alice = await openAs(replicas[0]!.url, 'alice');
    const again = await callsRoundRobin([replicas[0]!.url], alice, 1, 'alice');
    expect(quotaRefused(again)).toHaveLength(1);
    // bob used 6: 4 more on the new replica, then refused.
    const bob = await openAs(replicas[0]!.url, 'bob');
    const more = await callsRoundRobin([replicas[0]!.url], bob, 5, 'bob');
    expect(admitted(more)).toBe(4);
    expect(quotaRefused(more)).toHaveLength(1);
  }, 60_000);

  it('counts each refusal by quota, on the replica that refused', async () => {
    const texts = await Promise.all(replicas.map(async (r) => (await fetch(new URL('/metrics', r.base))).text()));
    const total = texts.reduce((n, t) => n + sample(t, 'mcpgw_quota_exceeded_total', { quota: 'echo-calls' }), 0);
    // Alice's 11th and 12th calls went to replicas 1 and 2; the new replica 0 refused alice and bob once each
    // (the first replica 0's refusal of her 13th went with it).
    expect(total).toBe(4);
  });
});

describe('a quota of 0.5 s upstream a month', () => {
  it('counts a call as it ends: 400 ms calls are admitted until 0.5 s are used, then refused', async () => {
    const sid = await openAs(replicas[1]!.url, 'carol');
    const sleep = async (r: RunningGateway, id: number) => {
      const body = {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'slow__sleep', arguments: { ms: 400, steps: 0 } },
      };
      const res = await post(r.url, body, { ...bearer(keyOf('carol')), ...sessionHeaders(sid) });
      return { status: res.status, ...(res.json as Record<string, unknown>) } as CallOutcome;
    };
    expect((await sleep(replicas[1]!, 1)).result).toBeDefined();
    // 0.4 s used: not yet 0.5, so the next is admitted (and ends past the quota).
    await until(
      "carol's first call counted",
      async () => usedBy(await statusQuotas(replicas[2]!), 'slow-time', 'carol') >= 0.4,
    );
    expect((await sleep(replicas[2]!, 2)).result).toBeDefined();
    await until(
      'both calls counted',
      async () => usedBy(await statusQuotas(replicas[0]!), 'slow-time', 'carol') >= 0.8,
    );
    const no = await sleep(replicas[0]!, 3);
    expect(no.status).toBe(429);
    expect(no.error!.data).toMatchObject({ type: 'QUOTA_EXCEEDED', quota: 'slow-time', measure: 'upstreamSeconds' });
    // The echo quota counts echo tools only: carol's echo calls are still admitted.
    expect(admitted(await callsRoundRobin(urls(), sid, 2, 'carol'))).toBe(2);
  }, 30_000);
});

function usedBy(quotas: QuotaRow[], quota: string, principal: string): number {
  const q = quotas.find((x) => x.name === quota);
  return q?.measures[0]?.top.find((t) => t.principal === principal)?.used ?? 0;
}

describe('/status.json', () => {
  it('shows every quota with its window and the same top consumers on every replica', async () => {
    const reports = await Promise.all(replicas.map(statusQuotas));
    for (const quotas of reports) expect(quotas).toEqual(reports[0]);
    const [echo, slow] = reports[0]!;
    expect(echo).toMatchObject({ name: 'echo-calls', window: 'day', resetAt: new Date(nextMidnight()).toISOString() });
    expect(echo!.measures).toEqual([
      {
        measure: 'calls',
        limit: 10,
        top: [
          { principal: 'alice', used: 10 },
          { principal: 'bob', used: 10 },
          { principal: 'carol', used: 2 },
        ],
      },
    ]);
    expect(slow).toMatchObject({ name: 'slow-time', window: 'month' });
    expect(slow!.measures[0]).toMatchObject({ measure: 'upstreamSeconds', limit: 0.5 });
    const carol = slow!.measures[0]!.top;
    expect(carol.map((t) => t.principal)).toEqual(['carol']);
    // Two calls of 400 ms each, as the gateway timed them upstream.
    expect(carol[0]!.used).toBeGreaterThanOrEqual(0.8);
    expect(carol[0]!.used).toBeLessThan(2);
  });

  it('keeps the counts in keys that expire when their window ends', async () => {
    const keys = (await redis.command('KEYS', '*quota:{echo-calls:*')).split('\r\n').filter((l) => l.includes('quota'));
    expect(keys.length).toBeGreaterThanOrEqual(4); // three principals' calls and the sorted set
    for (const key of keys) {
      const ttl = Number((await redis.command('PTTL', key)).replace(/^:/, '').trim());
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(nextMidnight() - Date.now() + 1000);
    }
  });
});
