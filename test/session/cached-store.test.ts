/**
 * CachedSessionStore: the SessionStore contract holds through the cache, and its staleness is
 * bounded: a change made behind its back (by another replica) shows within cacheMs; a change
 * made through it shows at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CachedSessionStore } from '../../src/session/cached-store.js';
import { MemorySessionStore } from '../../src/session/memory-store.js';
import type { SessionRecord } from '../../src/session/session-store.js';
import { sessionStoreContract } from './store-contract.js';

sessionStoreContract(
  'CachedSessionStore over MemorySessionStore',
  ({ ttlSeconds }) =>
    new CachedSessionStore(new MemorySessionStore({ ttlSeconds, sweepIntervalMs: 100 }), { maxAgeMs: 50 }),
);

const record = (id: string): SessionRecord => ({
  id,
  protocolVersion: '2025-06-18',
  clientCapabilities: {},
  clientInfo: undefined,
  initialized: false,
  createdAt: Date.now(),
});

describe('CachedSessionStore staleness', () => {
  const stores: MemorySessionStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  function make(cacheMs: number): { shared: MemorySessionStore; cached: CachedSessionStore } {
    const shared = new MemorySessionStore({ ttlSeconds: 60 });
    stores.push(shared);
    return { shared, cached: new CachedSessionStore(shared, { maxAgeMs: cacheMs }) };
  }

  it('serves a record deleted elsewhere for at most cacheMs, then reports it gone', async () => {
    const { shared, cached } = make(300);
    await cached.create(record('s1'));
    expect(await cached.get('s1')).toBeDefined();
    await shared.delete('s1'); // another replica deleted it
    expect(await cached.get('s1')).toBeDefined();
    await new Promise((r) => setTimeout(r, 350));
    expect(await cached.get('s1')).toBeUndefined();
  });

  it('sees its own delete and update at once', async () => {
    const { cached } = make(10_000);
    await cached.create(record('s2'));
    await cached.update('s2', { initialized: true });
    expect((await cached.get('s2'))?.initialized).toBe(true);
    await cached.delete('s2');
    expect(await cached.get('s2')).toBeUndefined();
  });

  it('hands out copies: a caller changing a record does not change the cache', async () => {
    const { cached } = make(10_000);
    await cached.create(record('s3'));
    const got = (await cached.get('s3'))!;
    got.initialized = true;
    expect((await cached.get('s3'))!.initialized).toBe(false);
  });

  it("a delete through one replica drops the other replicas' copies at once (announce → invalidate)", async () => {
    const shared = new MemorySessionStore({ ttlSeconds: 60 });
    stores.push(shared);
    const replicas: CachedSessionStore[] = [];
    const announce = async (id: string) => {
      for (const r of replicas) r.invalidate(id);
    };
    replicas.push(
      new CachedSessionStore(shared, { maxAgeMs: 10_000, announce }),
      new CachedSessionStore(shared, { maxAgeMs: 10_000, announce }),
    );
    const [a, b] = replicas as [CachedSessionStore, CachedSessionStore];
    await a.create(record('s4'));
    expect(await b.get('s4')).toBeDefined(); // cached on b
    expect(await a.delete('s4')).toBe(true);
    expect(await b.get('s4')).toBeUndefined();
  });

  it('serves nothing from the cache while the shared store is unhealthy', async () => {
    const shared = new MemorySessionStore({ ttlSeconds: 60 });
    stores.push(shared);
    let healthy = true;
    const cached = new CachedSessionStore(shared, { maxAgeMs: 10_000, healthy: () => healthy });
    await cached.create(record('s5'));
    await shared.delete('s5');
    expect(await cached.get('s5')).toBeDefined(); // healthy: a fresh copy is served
    healthy = false;
    expect(await cached.get('s5')).toBeUndefined(); // unhealthy: straight to the store
    healthy = true;
    expect(await cached.get('s5')).toBeUndefined(); // and the copies were dropped
  });
});
