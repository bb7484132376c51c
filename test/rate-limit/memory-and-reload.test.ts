/**
 * Without Redis each replica counts in its own memory, the same arithmetic as Redis's script;
 * anonymous callers are counted by their client address. A reload changes the rules from the
 * next request on: a rule kept (same name and key) keeps its count, a new one starts fresh, and
 * with no rule left nothing is counted at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, SLOW_SERVER, stdioUpstream } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';
import { admitted, callsRoundRobin, openAs, refused, sessionHeaders } from '../support/rate-limits.js';
import { post } from '../support/gateway.js';

const upstreams = [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)];
const perClient = { name: 'per-client', match: { methods: ['tools/call'] }, limit: 100, windowMs: 60000 };
const cleanups: Array<() => Promise<void>> = [];
let gw: Awaited<ReturnType<typeof startFromFile>>;

beforeAll(async () => {
  gw = await startFromFile({ upstreams, rateLimits: { rules: [perClient] } }, cleanups);
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('rate limits in memory (one replica, no Redis)', () => {
  it('admits exactly 100 of 110, then refuses with 429 and the typed error', async () => {
    const sid = await openAs(gw.url);
    const outcomes = await callsRoundRobin([gw.url], sid, 110);
    expect(admitted(outcomes)).toBe(100);
    const no = refused(outcomes);
    expect(no).toHaveLength(10);
    expect(no[0]!.status).toBe(429);
    expect(no[0]!.error!.data).toMatchObject({ type: 'RATE_LIMITED', rule: 'per-client' });
    expect(no[0]!.error!.data!.retryAfterMs).toBeGreaterThan(50000);
  }, 30_000);

  it('counts anonymous sessions by their client address: a new session of the same client is refused too', async () => {
    const sid = await openAs(gw.url);
    const [first] = await callsRoundRobin([gw.url], sid, 1);
    expect(first!.error?.data?.type).toBe('RATE_LIMITED');
  });

  it('a reload keeps the count of a kept rule and starts a new rule fresh', async () => {
    const other = { name: 'tools-only', match: { tools: ['echo__*'] }, key: 'tool', limit: 3, windowMs: 60000 };
    gw.file.write({ upstreams, rateLimits: { rules: [perClient, other] } });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const sid = await openAs(gw.url);
    const [kept] = await callsRoundRobin([gw.url], sid, 1);
    expect(kept!.error?.data?.rule).toBe('per-client');
  });

  it('a reload that raises the limit admits at once; the new rule counts from its first request', async () => {
    const other = { name: 'tools-only', match: { tools: ['echo__*'] }, key: 'tool', limit: 3, windowMs: 60000 };
    gw.file.write({ upstreams, rateLimits: { rules: [{ ...perClient, limit: 200 }, other] } });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const sid = await openAs(gw.url);
    const outcomes = await callsRoundRobin([gw.url], sid, 4);
    expect(admitted(outcomes)).toBe(3);
    expect(outcomes[3]!.error?.data?.rule).toBe('tools-only');
  });

  it('a reload that removes every rule counts nothing any more', async () => {
    gw.file.write({ upstreams });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const sid = await openAs(gw.url);
    expect(admitted(await callsRoundRobin([gw.url], sid, 5))).toBe(5);
  });

  it('checks each message of a batch on its own: the refused ones in-band, the reply 200', async () => {
    const rules = [{ name: 'batch', match: { methods: ['tools/call'] }, limit: 2, windowMs: 60000 }];
    gw.file.write({ upstreams, rateLimits: { rules } });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const sid = await openAs(gw.url, undefined, '2025-03-26');
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { text: String(id) } },
    });
    const res = await post(gw.url, [call(1), call(2), call(3), { jsonrpc: '2.0', id: 4, method: 'tools/list' }], {
      ...sessionHeaders(sid, '2025-03-26'),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('retry-after')).toBeNull();
    const byId = new Map((res.json as Array<{ id: number }>).map((m) => [m.id, m as Record<string, any>]));
    expect(byId.get(1)!.result).toBeDefined();
    expect(byId.get(2)!.result).toBeDefined();
    expect(byId.get(3)!.error.data).toMatchObject({ type: 'RATE_LIMITED', rule: 'batch' });
    expect(byId.get(4)!.result.tools.length).toBeGreaterThan(0);
  });
});
