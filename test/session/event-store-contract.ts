/**
 * The EventStore contract as a reusable suite: every implementation (memory, Redis) runs the
 * same tests. The factory gets the limits to use.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { comparePositions, type EventStore, type EventStoreLimits } from '../../src/streams/event-store.js';

export type EventStoreFactory = (limits: EventStoreLimits) => EventStore | Promise<EventStore>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const note = (n: number) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/progress',
  params: { progressToken: 't', progress: n },
});

export function eventStoreContract(name: string, makeStore: EventStoreFactory): void {
  describe(`EventStore contract: ${name}`, () => {
    const open: EventStore[] = [];

    async function make(limits: Partial<EventStoreLimits> = {}): Promise<EventStore> {
      const store = await makeStore({ maxEvents: 1000, maxAgeMs: 60_000, ...limits });
      open.push(store);
      return store;
    }

    afterEach(async () => {
      for (const store of open.splice(0)) await store.close();
    });

    it('appends in order: positions increase and each event names the one before it', async () => {
      const store = await make();
      const sid = randomUUID();
      const events = [];
      for (let i = 1; i <= 20; i++) events.push(await store.append(sid, 'a', note(i)));
      expect(events[0]!.previous).toBe('');
      for (let i = 1; i < events.length; i++) {
        expect(comparePositions(events[i]!.position, events[i - 1]!.position)).toBeGreaterThan(0);
        expect(events[i]!.previous).toBe(events[i - 1]!.position);
      }
      expect(new Set(events.map((e) => e!.position)).size).toBe(20);
    });

    it('replays exactly the events after a position, in order, with markers and the final flag', async () => {
      const store = await make();
      const sid = randomUUID();
      const marker = await store.append(sid, 'a', undefined);
      const first = await store.append(sid, 'a', note(1));
      await store.append(sid, 'a', note(2));
      const last = await store.append(sid, 'a', { jsonrpc: '2.0', id: 7, result: { ok: true } }, { final: true });

      const fromMarker = await store.replay(sid, 'a', marker!.position);
      expect(fromMarker!.anchor).toMatchObject({ position: marker!.position, message: undefined, final: false });
      expect(fromMarker!.events.map((e) => e.message)).toEqual([
        note(1),
        note(2),
        { jsonrpc: '2.0', id: 7, result: { ok: true } },
      ]);
      expect(fromMarker!.events.map((e) => e.final)).toEqual([false, false, true]);
      expect(fromMarker!.events[0]!.previous).toBe(marker!.position);

      const fromFirst = await store.replay(sid, 'a', first!.position);
      expect(fromFirst!.events.map((e) => e.position)).toEqual(fromMarker!.events.slice(1).map((e) => e.position));

      const fromLast = await store.replay(sid, 'a', last!.position);
      expect(fromLast).toEqual({ anchor: expect.objectContaining({ final: true }), events: [] });
    });

    it('answers undefined for a position it does not hold, and keeps sessions and streams apart', async () => {
      const store = await make();
      const sid = randomUUID();
      const e = await store.append(sid, 'a', note(1));
      await store.append(sid, 'a', note(2));
      expect(await store.replay(sid, 'b', e!.position)).toBeUndefined(); // another stream
      expect(await store.replay(randomUUID(), 'a', e!.position)).toBeUndefined(); // another session
      expect(await store.replay(sid, 'a', '1-0')).toBeUndefined(); // a position that never existed
      expect(await store.replay(sid, 'never', '1-0')).toBeUndefined();
      await store.append(sid, 'b', note(9));
      expect((await store.replay(sid, 'a', e!.position))!.events.map((x) => x.message)).toEqual([note(2)]);
    });

    it('onlyIfExists records nothing for a stream that does not exist, and appends to one that does', async () => {
      const store = await make();
      const sid = randomUUID();
      expect(await store.append(sid, 'get', note(1), { onlyIfExists: true })).toBeUndefined();
      const marker = await store.append(sid, 'get', undefined);
      const e = await store.append(sid, 'get', note(2), { onlyIfExists: true });
      expect(e).toMatchObject({ previous: marker!.position, message: note(2) });
      expect((await store.replay(sid, 'get', marker!.position))!.events.map((x) => x.message)).toEqual([note(2)]);
    });

    it('keeps concurrent appends to one stream as one chain', async () => {
      const store = await make();
      const sid = randomUUID();
      const first = await store.append(sid, 'a', undefined);
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.append(sid, 'a', note(i))));
      const { events } = (await store.replay(sid, 'a', first!.position))!;
      expect(events).toHaveLength(50);
      let previous = first!.position;
      for (const e of events) {
        expect(e.previous).toBe(previous);
        previous = e.position;
      }
    });

    it('is bounded by length: the oldest events go first (approximately, for Redis)', async () => {
      const store = await make({ maxEvents: 10 });
      const sid = randomUUID();
      const first = await store.append(sid, 'a', note(0));
      let last = first;
      for (let i = 1; i < 400; i++) last = await store.append(sid, 'a', note(i));
      expect(await store.replay(sid, 'a', first!.position)).toBeUndefined();
      expect((await store.replay(sid, 'a', last!.position))!.events).toEqual([]);
    });

    it('is bounded by age: a stream unused for maxAge is gone; touch keeps it', async () => {
      const store = await make({ maxAgeMs: 700 });
      const sid = randomUUID();
      const idle = await store.append(sid, 'idle', note(1));
      const kept = await store.append(sid, 'kept', note(1));
      for (let i = 0; i < 4; i++) {
        await sleep(300);
        await store.touch(sid, 'kept');
      }
      expect(await store.replay(sid, 'idle', idle!.position)).toBeUndefined();
      expect(await store.replay(sid, 'kept', kept!.position)).toBeDefined();
      // Appending to an expired stream starts a new one.
      expect((await store.append(sid, 'idle', note(2)))!.previous).toBe('');
    });

    it('forgets every stream of an ended session, and only of that session', async () => {
      const store = await make();
      const ended = randomUUID();
      const other = randomUUID();
      const a = await store.append(ended, 'a', note(1));
      const get = await store.append(ended, 'get', undefined);
      const kept = await store.append(other, 'a', note(1));
      await store.forgetSession(ended);
      expect(await store.replay(ended, 'a', a!.position)).toBeUndefined();
      expect(await store.replay(ended, 'get', get!.position)).toBeUndefined();
      expect(await store.append(ended, 'get', note(2), { onlyIfExists: true })).toBeUndefined();
      expect(await store.replay(other, 'a', kept!.position)).toBeDefined();
      await store.forgetSession(randomUUID()); // a session without streams: nothing to do
    });
  });
}
