/**
 * The SessionStore contract as a reusable suite: every store implementation (memory today,
 * Redis later) runs the same tests. Call it from a test file:
 *
 *   sessionStoreContract('MemorySessionStore', ({ ttlSeconds }) => new MemorySessionStore({ ttlSeconds, sweepIntervalMs: 100 }));
 *
 * The factory gets the idle ttl to use; it should make expiry observable within a few hundred
 * milliseconds of the ttl (a short sweep interval, or keyspace notifications for Redis).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionRecord, SessionStore } from '../../src/session/session-store.js';

export type StoreFactory = (options: { ttlSeconds: number }) => SessionStore | Promise<SessionStore>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Upper bound on how long any expiry in this suite may take to be noticed. */
const EXPIRY_WAIT_MS = 6000;

function record(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: `test-${randomUUID()}`,
    protocolVersion: '2025-06-18',
    clientCapabilities: { roots: { listChanged: true }, sampling: {} },
    clientInfo: { name: 'contract-client', version: '1.2.3', title: 'Contract' },
    initialized: false,
    createdAt: 1_700_000_000_000,
    ...overrides,
  };
}

/** Resolves (with the time it was noticed) once `seen` holds `id`; rejects after `ms`. */
function expiryOf(store: SessionStore, id: string, seen: string[], ms = EXPIRY_WAIT_MS): Promise<number> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const check = () => {
      if (seen.includes(id)) return resolve(Date.now());
      if (Date.now() > deadline) return reject(new Error(`session ${id} did not expire within ${ms} ms`));
      setTimeout(check, 25);
    };
    check();
  });
}

export function sessionStoreContract(name: string, makeStore: StoreFactory): void {
  describe(`SessionStore contract: ${name}`, () => {
    const open: SessionStore[] = [];

    async function make(ttlSeconds = 60): Promise<SessionStore> {
      const store = await makeStore({ ttlSeconds });
      open.push(store);
      return store;
    }

    afterEach(async () => {
      for (const store of open.splice(0)) await store.close();
    });

    it('creates, gets, updates and deletes a session', async () => {
      const store = await make();
      const rec = record();
      await store.create(rec);
      expect(await store.get(rec.id)).toEqual(rec);

      expect(await store.update(rec.id, { initialized: true, logLevel: 'debug' })).toBe(true);
      const updated = await store.get(rec.id);
      expect(updated).toEqual({ ...rec, initialized: true, logLevel: 'debug' });
      // A shallow merge: fields not in the patch stay as they were.
      expect(updated?.clientInfo).toEqual(rec.clientInfo);
      expect(updated?.protocolVersion).toBe('2025-06-18');

      expect(await store.delete(rec.id)).toBe(true);
      expect(await store.get(rec.id)).toBeUndefined();
      expect(await store.update(rec.id, { initialized: false })).toBe(false);
    });

    it('keeps sessions apart', async () => {
      const store = await make();
      const a = record({ protocolVersion: '2025-03-26' });
      const b = record({ protocolVersion: '2025-06-18' });
      await store.create(a);
      await store.create(b);
      expect(await store.update(a.id, { logLevel: 'error' })).toBe(true);
      expect((await store.get(a.id))?.logLevel).toBe('error');
      expect((await store.get(b.id))?.logLevel).toBeUndefined();
      expect(await store.delete(a.id)).toBe(true);
      expect(await store.get(b.id)).toEqual(b);
      expect(await store.size()).toBeGreaterThanOrEqual(1);
    });

    it('answers undefined / false for an unknown session', async () => {
      const store = await make();
      const id = `unknown-${randomUUID()}`;
      expect(await store.get(id)).toBeUndefined();
      expect(await store.update(id, { initialized: true })).toBe(false);
      expect(await store.delete(id)).toBe(false);
      // update of an unknown id must not create it
      expect(await store.get(id)).toBeUndefined();
    });

    it('deletes once: a second delete returns false', async () => {
      const store = await make();
      const rec = record();
      await store.create(rec);
      expect(await store.delete(rec.id)).toBe(true);
      expect(await store.delete(rec.id)).toBe(false);
    });

    it('stores records as plain JSON (a JSON round trip gives the same record)', async () => {
      const store = await make();
      const rec = record({
        initialized: true,
        logLevel: 'info',
        clientCapabilities: { elicitation: {}, experimental: { x: [1, 'two', null] } },
      });
      await store.create(rec);
      const got = await store.get(rec.id);
      expect(got).toBeDefined();
      expect(JSON.parse(JSON.stringify(got))).toEqual(got);
      expect(JSON.parse(JSON.stringify(got))).toEqual(rec);
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);

      const anonymous = record({ clientInfo: undefined });
      await store.create(anonymous);
      const back = await store.get(anonymous.id);
      expect(JSON.parse(JSON.stringify(back))).toEqual(JSON.parse(JSON.stringify(anonymous)));
      expect(back?.clientInfo).toBeUndefined();
    });

    it('expires a session left idle for longer than the ttl and reports it', async () => {
      const store = await make(1);
      const expired: string[] = [];
      store.onExpired((id) => expired.push(id));
      const rec = record();
      const createdAt = Date.now();
      await store.create(rec);
      // Wait without touching it (get counts as use).
      const expiredAt = await expiryOf(store, rec.id, expired);
      // Never before the ttl: a session used within the last ttl must not expire.
      expect(expiredAt - createdAt).toBeGreaterThanOrEqual(1000);
      expect(expired.filter((id) => id === rec.id)).toHaveLength(1);
      expect(await store.get(rec.id)).toBeUndefined();
      expect(await store.update(rec.id, { initialized: true })).toBe(false);
      expect(await store.delete(rec.id)).toBe(false);
    });

    it('treats get as use: a session used more often than the ttl does not expire', async () => {
      // A 3 s ttl, not 1 s: on a loaded machine one get can come a second late, and the point is
      // use more often than the ttl, not how punctual the test's own timers are.
      const store = await make(3);
      const expired: string[] = [];
      store.onExpired((id) => expired.push(id));
      const rec = record();
      await store.create(rec);
      // 4 s of use every 400 ms: past the 3 s ttl in total, never idle for 3 s.
      for (let i = 0; i < 10; i++) {
        await sleep(400);
        expect(await store.get(rec.id), `get #${i + 1}`).toEqual(rec);
      }
      expect(expired).not.toContain(rec.id);
      // Left alone now, it expires.
      await expiryOf(store, rec.id, expired);
      expect(await store.get(rec.id)).toBeUndefined();
    });

    it('fires onExpired for expired sessions only, never for deleted ones', async () => {
      const store = await make(1);
      const expired: string[] = [];
      store.onExpired((id) => expired.push(id));
      const kept = record();
      const deleted = record();
      await store.create(kept);
      await store.create(deleted);
      expect(await store.delete(deleted.id)).toBe(true);
      await expiryOf(store, kept.id, expired);
      // Give a late notification for the deleted one time to show up.
      await sleep(500);
      expect(expired).toContain(kept.id);
      expect(expired).not.toContain(deleted.id);
    });
  });
}
