/**
 * The quotas' arithmetic on a clock the test sets (no sleeping): UTC calendar windows and their
 * reset at the boundary, which calls a quota's globs select, calls and upstream seconds counted,
 * the typed refusal and its reset time, and the top consumers /status reads.
 */
import { describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import type { QuotasConfig } from '../../src/config/schema.js';
import type { RequestContext } from '../../src/contracts/request-context.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import type { JsonRpcRequest } from '../../src/jsonrpc/messages.js';
import { DataPathEvents } from '../../src/observability/events.js';
import { MemoryQuotaStore, type QuotaStore } from '../../src/quota/quota-store.js';
import { Quotas } from '../../src/quota/quotas.js';
import { windowAt } from '../../src/quota/windows.js';
import type { RoutesOf } from '../../src/rate-limit/request-facts.js';

const log = { warn: () => undefined, error: () => undefined } as unknown as Logger;
const routes: RoutesOf = {
  tool: (name) =>
    name.startsWith('echo__') ? { upstream: 'echo' } : name === 'slow__sleep' ? { upstream: 'slow' } : undefined,
  prompt: () => undefined,
  resource: () => undefined,
};
const as = (principal: string) => ({ principal, scope: 's', stateless: false }) as unknown as RequestContext;
const call = (name: string): JsonRpcRequest => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } });

/** Quotas over a memory store on a clock the test moves. */
function quotasOf(rules: Array<Record<string, unknown>>, start = Date.UTC(2026, 11, 4, 23, 59, 0)) {
  const clock = { now: start };
  const config = { rules, onStoreError: 'allow', storeTimeoutMs: 250, topConsumers: 2 } as QuotasConfig;
  const store = new MemoryQuotaStore(() => clock.now);
  const quotas = new Quotas(config, store, new DataPathEvents('quota-test'), log, () => clock.now);
  /** The refusal of one call, or undefined when admitted. */
  const tryCall = (principal: string, tool = 'echo__echo'): GatewayError | undefined => {
    try {
      const admitted = quotas.admit(as(principal), call(tool), routes);
      expect(admitted).toBeUndefined(); // a memory store answers at once
      return undefined;
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      return err as GatewayError;
    }
  };
  return { clock, store, quotas, tryCall };
}

describe('windows', () => {
  it('a day and a month are UTC calendar spans, named alike on every replica', () => {
    const t = Date.UTC(2026, 11, 31, 23, 59, 59, 999);
    expect(windowAt('day', t)).toEqual({
      id: '2026-12-31',
      start: Date.UTC(2026, 11, 31),
      end: Date.UTC(2027, 0, 1),
    });
    expect(windowAt('month', t)).toEqual({ id: '2026-12', start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
    expect(windowAt('day', t + 1).id).toBe('2027-01-01');
    expect(windowAt('month', Date.UTC(2028, 1, 29, 12)).end).toBe(Date.UTC(2028, 2, 1));
  });
});

describe('calls per window', () => {
  it('admits exactly N, refuses the next with QUOTA_EXCEEDED until 00:00 UTC, then admits again', () => {
    const { clock, tryCall } = quotasOf([{ name: 'daily', window: 'day', calls: 3 }]);
    expect([tryCall('alice'), tryCall('alice'), tryCall('alice')]).toEqual([undefined, undefined, undefined]);
    const no = tryCall('alice')!;
    expect(no.type).toBe('QUOTA_EXCEEDED');
    const data = no.toJsonRpc();
    expect(data.code).toBe(-32015);
    expect(data.data).toMatchObject({
      type: 'QUOTA_EXCEEDED',
      retryable: true,
      quota: 'daily',
      measure: 'calls',
      limit: 3,
      resetAt: '2026-12-05T00:00:00.000Z',
      retryAfterMs: 60_000,
    });
    // A refused call is not counted: still refused a ms before midnight, admitted at it.
    clock.now = Date.UTC(2026, 11, 4, 23, 59, 59, 999);
    expect(tryCall('alice')?.toJsonRpc().data).toMatchObject({ retryAfterMs: 1 });
    clock.now = Date.UTC(2026, 11, 5);
    expect(tryCall('alice')).toBeUndefined();
  });

  it('counts each principal on its own', () => {
    const { tryCall } = quotasOf([{ name: 'daily', window: 'day', calls: 1 }]);
    expect(tryCall('alice')).toBeUndefined();
    expect(tryCall('alice')?.type).toBe('QUOTA_EXCEEDED');
    expect(tryCall('bob')).toBeUndefined();
  });

  it('a month window holds across days and resets on the 1st', () => {
    const { clock, tryCall } = quotasOf([{ name: 'monthly', window: 'month', calls: 2 }], Date.UTC(2026, 10, 3));
    expect(tryCall('alice')).toBeUndefined();
    clock.now = Date.UTC(2026, 10, 30, 23);
    expect(tryCall('alice')).toBeUndefined();
    expect(tryCall('alice')?.toJsonRpc().data).toMatchObject({ resetAt: '2026-12-01T00:00:00.000Z' });
    clock.now = Date.UTC(2026, 11, 1);
    expect(tryCall('alice')).toBeUndefined();
  });

  it('forgets an ended window once a new one starts', () => {
    const { clock, store, tryCall } = quotasOf([{ name: 'daily', window: 'day', calls: 5 }]);
    tryCall('alice');
    expect(store.windows).toBe(1);
    clock.now += 24 * 3600_000;
    tryCall('alice');
    expect(store.windows).toBe(1);
  });
});

describe('matching', () => {
  it('servers, tools and principals globs narrow a quota; other methods and unknown tools are not counted', () => {
    const { quotas, tryCall } = quotasOf([
      { name: 'slow-only', window: 'day', calls: 1, match: { servers: ['sl*'] } },
      { name: 'echo-tool', window: 'day', calls: 1, match: { tools: ['echo__e?ho'], principals: ['team-*'] } },
    ]);
    // Not the slow server, and alice is no team-*: no quota fits.
    expect([tryCall('alice'), tryCall('alice')]).toEqual([undefined, undefined]);
    expect(tryCall('alice', 'slow__sleep')).toBeUndefined();
    expect(tryCall('alice', 'slow__sleep')?.toJsonRpc().data).toMatchObject({ quota: 'slow-only' });
    expect(tryCall('team-a')).toBeUndefined();
    expect(tryCall('team-a')?.toJsonRpc().data).toMatchObject({ quota: 'echo-tool' });
    expect(tryCall('team-a', 'echo__add')).toBeUndefined(); // the tools glob leaves it out
    // A name the catalog lacks, and a method other than tools/call: never a counter.
    expect(tryCall('team-a', 'nope__nope')).toBeUndefined();
    const list: JsonRpcRequest = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect(quotas.admit(as('team-a'), list, routes)).toBeUndefined();
  });

  it('anonymous callers count by client address, as rate limits do', async () => {
    const { quotas } = quotasOf([{ name: 'daily', window: 'day', calls: 1 }]);
    const anon = { scope: 's1', stateless: false, remoteAddress: '10.0.0.7' } as unknown as RequestContext;
    quotas.admit(anon, call('echo__echo'), routes);
    const other = { ...anon, scope: 's2' } as RequestContext;
    expect(() => quotas.admit(other, call('echo__echo'), routes)).toThrow(/Quota "daily" used up/);
    const [report] = await quotas.report();
    expect(report!.measures[0]!.top).toEqual([{ principal: 'address:10.0.0.7', used: 1 }]);
  });
});

describe('upstream seconds', () => {
  it("adds each call's time as it ends, to the quotas that fit it; past the limit the next call is refused", () => {
    const { clock, quotas, tryCall } = quotasOf([
      { name: 'time', window: 'day', upstreamSeconds: 10 },
      { name: 'slow-time', window: 'day', upstreamSeconds: 100, match: { servers: ['slow'] } },
    ]);
    expect(tryCall('alice')).toBeUndefined();
    quotas.spent({ who: 'alice', upstream: 'echo', tool: 'echo__echo', seconds: 6 });
    expect(tryCall('alice')).toBeUndefined();
    quotas.spent({ who: 'alice', upstream: 'echo', tool: 'echo__echo', seconds: 4.5 });
    const no = tryCall('alice')!;
    expect(no.toJsonRpc().data).toMatchObject({ quota: 'time', measure: 'upstreamSeconds', limit: 10 });
    expect(no.message).toContain('10 s upstream per day UTC');
    expect(tryCall('bob')).toBeUndefined();
    // A call's end that names no catalog tool adds nothing.
    quotas.spent({ who: 'bob', upstream: 'echo', tool: '', seconds: 50 });
    expect(tryCall('bob')).toBeUndefined();
    clock.now = Date.UTC(2026, 11, 5);
    expect(tryCall('alice')).toBeUndefined();
  });

  it('reports the top consumers of each measure, most first, bounded by topConsumers', async () => {
    const { quotas, tryCall } = quotasOf([{ name: 'both', window: 'day', calls: 100, upstreamSeconds: 1000 }]);
    for (const [who, n] of [
      ['alice', 3],
      ['bob', 5],
      ['carol', 1],
    ] as const)
      for (let i = 0; i < n; i++) tryCall(who);
    quotas.spent({ who: 'carol', upstream: 'echo', tool: 'echo__echo', seconds: 7.25 });
    quotas.spent({ who: 'alice', upstream: 'echo', tool: 'echo__echo', seconds: 2 });
    const [report] = await quotas.report();
    expect(report).toEqual({
      name: 'both',
      window: 'day',
      windowStart: '2026-12-04T00:00:00.000Z',
      resetAt: '2026-12-05T00:00:00.000Z',
      measures: [
        {
          measure: 'calls',
          limit: 100,
          top: [
            { principal: 'bob', used: 5 },
            { principal: 'alice', used: 3 },
          ],
        },
        {
          measure: 'upstreamSeconds',
          limit: 1000,
          top: [
            { principal: 'carol', used: 7.25 },
            { principal: 'alice', used: 2 },
          ],
        },
      ],
    });
  });
});

describe('a failing store', () => {
  /** A store whose every command fails, as Redis down or late does. */
  const failing = (): QuotaStore => ({
    admit: () => Promise.reject(new Error('store down')),
    addSeconds: () => Promise.reject(new Error('store down')),
    top: () => Promise.reject(new Error('store down')),
    close: async () => undefined,
  });
  const quotasOn = (onStoreError: 'allow' | 'deny') => {
    const config = {
      rules: [{ name: 'daily', window: 'day', calls: 1, upstreamSeconds: 10 }],
      onStoreError,
      storeTimeoutMs: 250,
      topConsumers: 10,
    };
    return new Quotas(config as QuotasConfig, failing(), new DataPathEvents('quota-fail'), log);
  };

  it('onStoreError allow admits the call; deny refuses it with QUOTA_EXCEEDED and data.storeError', async () => {
    await expect(quotasOn('allow').admit(as('alice'), call('echo__echo'), routes)).resolves.toBeUndefined();
    const denied = quotasOn('deny').admit(as('alice'), call('echo__echo'), routes);
    await expect(denied).rejects.toMatchObject({ type: 'QUOTA_EXCEEDED' });
    const err = (await (denied as Promise<void>).catch((e: unknown) => e)) as GatewayError;
    expect(err.toJsonRpc().data).toMatchObject({ quota: 'daily', storeError: true, retryAfterMs: 1000 });
  });

  it('a failed seconds count is no thrown error, and /status says the store did not answer', async () => {
    const quotas = quotasOn('allow');
    expect(() => quotas.spent({ who: 'alice', upstream: 'echo', tool: 'echo__echo', seconds: 1 })).not.toThrow();
    await new Promise((r) => setImmediate(r)); // its rejection handled, not left unhandled
    const [report] = await quotas.report();
    expect(report).toMatchObject({
      name: 'daily',
      unavailable: true,
      measures: [
        { measure: 'calls', limit: 1, top: [] },
        { measure: 'upstreamSeconds', limit: 10, top: [] },
      ],
    });
  });
});
