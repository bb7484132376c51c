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

sessionStoreContract('CachedSessionStore over MemorySessionStore', ({ ttlSeconds }) => new CachedSessionStore(new MemorySessionStore({ ttlSeconds, sweepIntervalMs: 100 }), 50));

const record = (id: string): SessionRecord => ({ id, protocolVersion: '2025-06-18', clientCapabilities: {}, clientInfo: undefined, initialized: false, createdAt: Date.now() });

describe('CachedSessionStore staleness', () => {
  const stores: MemorySessionStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  function make(cacheMs: number): { shared: MemorySessionStore; cached: CachedSessionStore } {
    const shared = new MemorySessionStore({ ttlSeconds: 60 });
    stores.push(shared);
    return { shared, cached: new CachedSessionStore(shared, cacheMs) };
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
});
