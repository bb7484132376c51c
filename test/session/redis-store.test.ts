/**
 * RedisSessionStore against a real redis-server started by this file on a free loopback port:
 * the shared SessionStore contract (with keyspace notifications, and without them as on a
 * managed Redis that refuses CONFIG), then what only Redis has: replicas sharing sessions, lazy
 * TTL refresh, and outages (stopped, hung, restarted).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisSessionStore, type RedisSessionStoreOptions } from '../../src/session/redis-store.js';
import type { SessionRecord } from '../../src/session/session-store.js';
import { commandCalls, startRedis, type RedisServer } from '../support/redis.js';
import { sessionStoreContract } from './store-contract.js';
import { until } from '../support/wait.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let redis: RedisServer;
let lockedDown: RedisServer; // CONFIG renamed away, like many managed Redis services
const stores: RedisSessionStore[] = [];

beforeAll(async () => {
  [redis, lockedDown] = await Promise.all([startRedis(), startRedis({ args: ['--rename-command', 'CONFIG', ''] })]);
});

afterAll(async () => {
  for (const store of stores.splice(0)) await store.close();
  await Promise.all([redis?.stop(), lockedDown?.stop()]);
});

/** A store connected (and, with keyspace events, subscribed) before it is handed out. */
async function readyStore(
  options: Partial<RedisSessionStoreOptions> & { ttlSeconds: number },
  server = redis,
): Promise<RedisSessionStore> {
  const store = new RedisSessionStore({
    target: { url: server.url },
    keyPrefix: `t-${randomUUID().slice(0, 8)}:`,
    sweepIntervalMs: 100,
    ...options,
  });
  stores.push(store);
  await until('the store to be ready', () => store.ready, 5000);
  if (options.keyspaceEvents !== false && server === redis) {
    await until('keyspace notifications', () => store.status().expiryEvents === 'keyspace', 5000);
  }
  return store;
}

function record(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: randomUUID(),
    protocolVersion: '2025-06-18',
    clientCapabilities: {},
    clientInfo: { name: 'redis-test', version: '1' },
    initialized: false,
    createdAt: Date.now(),
    ...overrides,
  };
}

sessionStoreContract('RedisSessionStore (keyspace notifications)', ({ ttlSeconds }) => readyStore({ ttlSeconds }));

sessionStoreContract('RedisSessionStore (keyspace notifications off: local expiry checks)', ({ ttlSeconds }) =>
  readyStore({ ttlSeconds, keyspaceEvents: false }),
);

sessionStoreContract('RedisSessionStore (Redis refuses CONFIG)', ({ ttlSeconds }) =>
  readyStore({ ttlSeconds }, lockedDown),
);

describe('RedisSessionStore', () => {
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    if (!redis.running) await redis.start();
  });

  it('keeps one key per session, hash-tagged by session id, with ttl + refresh interval as its TTL', async () => {
    const store = await readyStore({ ttlSeconds: 60, keyPrefix: 'layout:' });
    const rec = record();
    await store.create(rec);
    const key = `layout:{${rec.id}}:session`;
    expect(await redis.command('GET', key)).toContain(JSON.stringify(rec));
    const pttl = Number((await redis.command('PTTL', key)).slice(1));
    // 60 s ttl + 10 % refresh interval: a session idle for exactly ttl is still there.
    expect(pttl).toBeGreaterThan(60_000);
    expect(pttl).toBeLessThanOrEqual(66_000);
    expect(await store.delete(rec.id)).toBe(true);
    expect(await redis.command('EXISTS', key)).toBe(':0\r\n');
  });

  it('shares sessions between replicas: a second store sees, updates and deletes what the first created', async () => {
    const keyPrefix = `shared-${randomUUID().slice(0, 8)}:`;
    const a = await readyStore({ ttlSeconds: 60, keyPrefix });
    const b = await readyStore({ ttlSeconds: 60, keyPrefix });
    const expiredOnA: string[] = [];
    a.onExpired((id) => expiredOnA.push(id));

    const rec = record();
    await a.create(rec);
    expect(await b.get(rec.id)).toEqual(rec);
    expect(await b.update(rec.id, { initialized: true, logLevel: 'debug' })).toBe(true);
    expect(await a.get(rec.id)).toEqual({ ...rec, initialized: true, logLevel: 'debug' });

    expect(await b.delete(rec.id)).toBe(true);
    expect(await a.get(rec.id)).toBeUndefined();
    expect(await a.delete(rec.id)).toBe(false);
    // A cannot tell "deleted elsewhere" from "expired": it reports the session gone, once, so
    // its listeners release what this replica held for it.
    expect(expiredOnA).toEqual([rec.id]);
    // Another prefix is another namespace.
    const other = await readyStore({ ttlSeconds: 60 });
    await a.create(rec);
    expect(await other.get(rec.id)).toBeUndefined();
  });

  it('without keyspace events, a key kept alive elsewhere is checked again as its TTL in Redis runs out', async () => {
    // ttl 4 s: the key's TTL is 4.4 s, and the local sweep (every 100 ms) looks once 4.4 s have
    // passed since this store refreshed it. Another replica (here PEXPIRE) kept the key to 5 s:
    // the sweep finds it alive at 4.4 s, and must look again when it goes at 5 s. Before, it
    // looked again a ttl later (at 8.4 s): a late refresh of its own went unnoticed as long, the
    // cause of the contract's rare 'did not expire within 6000 ms'.
    const keyPrefix = `late-${randomUUID().slice(0, 8)}:`;
    const store = await readyStore({ ttlSeconds: 4, keyspaceEvents: false, keyPrefix });
    const expired: Array<{ id: string; at: number }> = [];
    store.onExpired((id) => expired.push({ id, at: Date.now() }));
    const rec = record();
    await store.create(rec);
    await sleep(2000);
    const key = `${keyPrefix}{${rec.id}}:session`;
    expect(await redis.command('PEXPIRE', key, '3000')).toBe(':1\r\n');
    const gone = Date.now() + 3000;
    await until('the expiry to be noticed', () => expired.length > 0, 8000);
    expect(expired[0]!.id).toBe(rec.id);
    expect(expired[0]!.at - gone).toBeLessThan(2000);
  });

  it('refreshes the TTL lazily: many gets cost far fewer PEXPIREs', async () => {
    // ttl 60 s, refresh interval 10 % of it. Only the stores' clock (Date) is faked, from before
    // the first key is written: it stands still through a burst and moves a set step per get
    // after, while the Redis round trips stay real. So the counts follow the gets, not how fast
    // they go, and no key's TTL in Redis (66 s of real time) can run out during the test.
    const ttlSeconds = 60;
    const refreshMs = ttlSeconds * 1000 * 0.1;
    const store = await readyStore({ ttlSeconds, refreshFraction: 0.1 });
    const replica = await readyStore({ ttlSeconds, keyPrefix: 'lazy:' });
    const first = await readyStore({ ttlSeconds, keyPrefix: 'lazy:' });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      // A burst within one refresh interval refreshes nothing (create set the TTL).
      const rec = record();
      await store.create(rec);
      await redis.command('CONFIG', 'RESETSTAT');
      const N = 500;
      for (let i = 0; i < N; i++) expect(await store.get(rec.id)).toBeDefined();
      const burst = { gets: await commandCalls(redis, 'get'), pexpires: await commandCalls(redis, 'pexpire') };
      expect(burst.gets).toBe(N);
      expect(burst.pexpires).toBe(0);

      // Used every refreshMs / 10 for 15 refresh intervals: one PEXPIRE per interval.
      const s = record();
      await store.create(s);
      await redis.command('CONFIG', 'RESETSTAT');
      const gets = 150;
      const step = refreshMs / 10;
      const elapsed = gets * step;
      for (let i = 0; i < gets; i++) {
        expect(await store.get(s.id)).toBeDefined();
        vi.setSystemTime(Date.now() + step);
      }
      const pexpires = await commandCalls(redis, 'pexpire');
      console.log(
        `lazy TTL refresh: ${N} gets → ${burst.pexpires} PEXPIRE; ${gets} gets over ${elapsed} ms (store clock) → ${pexpires} PEXPIRE (refresh every ${refreshMs} ms)`,
      );
      expect(pexpires).toBeGreaterThanOrEqual(Math.floor(elapsed / refreshMs) - 1);
      expect(pexpires).toBeLessThanOrEqual(Math.ceil(elapsed / refreshMs) + 1);
      expect(pexpires).toBeLessThan(gets / 4);

      // A second replica refreshes on its first use (it cannot know when the first one did), then
      // it too refreshes lazily.
      const r = record();
      await first.create(r);
      await redis.command('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 50; i++) expect(await replica.get(r.id)).toEqual(r);
      expect(await commandCalls(redis, 'pexpire')).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports keyspace notifications in status() and falls back to local checks when CONFIG is refused', async () => {
    const store = await readyStore({ ttlSeconds: 60 });
    expect(store.status()).toEqual({ state: 'ready', connection: 'ready', expiryEvents: 'keyspace' });
    expect(await redis.command('CONFIG', 'GET', 'notify-keyspace-events')).toMatch(/E.*x|x.*E/);
    const managed = await readyStore({ ttlSeconds: 60 }, lockedDown);
    await sleep(200);
    expect(managed.status()).toMatchObject({ state: 'ready', expiryEvents: 'local' });
  });

  it('fails fast while Redis is down, reports not ready, and recovers on the same store when Redis is back', async () => {
    const store = await readyStore({ ttlSeconds: 60, commandTimeoutMs: 1000, maxBackoffMs: 200 });
    // No local sweep to speak of: its expiry events can only come from keyspace notifications.
    const events = await readyStore({ ttlSeconds: 1, maxBackoffMs: 200, sweepIntervalMs: 600_000 });
    const rec = record();
    await store.create(rec);

    await redis.stop();
    await until('the store to notice', () => !store.ready, 5000);
    expect(store.status()).toMatchObject({ state: 'unavailable' });
    expect(store.status().lastError).toBeDefined();
    const ops: Array<[string, () => Promise<unknown>]> = [
      ['get', () => store.get(rec.id)],
      ['create', () => store.create(record())],
      ['update', () => store.update(rec.id, { initialized: true })],
      ['delete', () => store.delete(rec.id)],
    ];
    for (const [name, op] of ops) {
      const t = Date.now();
      await expect(op(), name).rejects.toThrow();
      expect(Date.now() - t, `${name} rejected in`).toBeLessThan(500);
    }
    // Still failing fast a while later (no queue building up, no hang).
    await sleep(600);
    const t = Date.now();
    await expect(store.get(rec.id)).rejects.toThrow();
    console.log(`Redis down: get rejected in ${Date.now() - t} ms`);

    await redis.start(); // same port, empty: nothing was saved
    const recovered = await until('the store to reconnect', () => store.ready, 10_000);
    console.log(`Redis restarted: store ready again after ${recovered} ms`);
    expect(store.status()).toMatchObject({ state: 'ready' });
    expect(await store.get(rec.id)).toBeUndefined(); // Redis lost it
    const fresh = record();
    await store.create(fresh);
    expect(await store.get(fresh.id)).toEqual(fresh);

    // Keyspace notifications are server config, lost with the restart: the store enables them again.
    await until('the events store to reconnect', () => events.ready, 10_000);
    await until(
      'keyspace notifications again',
      async () => /E.*x|x.*E/.test(await redis.command('CONFIG', 'GET', 'notify-keyspace-events')),
      5000,
    );
    const expired: string[] = [];
    events.onExpired((id) => expired.push(id));
    const short = record();
    await events.create(short);
    await until('the expiry event after the restart', () => expired.includes(short.id), 6000);
  });

  it('a Redis that stops answering fails each command within commandTimeoutMs instead of hanging', async () => {
    const store = await readyStore({ ttlSeconds: 60, commandTimeoutMs: 500 });
    const rec = record();
    await store.create(rec);
    redis.pause();
    try {
      const t = Date.now();
      await expect(store.get(rec.id)).rejects.toThrow(/timed out/i);
      const took = Date.now() - t;
      console.log(`Redis hung (SIGSTOP): get rejected in ${took} ms (commandTimeoutMs 500)`);
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(2000);
    } finally {
      redis.resume();
    }
    expect(await store.get(rec.id)).toEqual(rec);
  });
});
