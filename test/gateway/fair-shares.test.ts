/**
 * FairShares (upstreams[].fairness) on its own, with the in-flight table that cancels its waiting
 * calls: turns between principals, a full queue refused with the typed error, a cancelled wait
 * that frees nothing twice, a reload's new bounds, and the events metrics count.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FairShares, FairWait, type FairSlot } from '../../src/gateway/fair-shares.js';
import { InFlightTable } from '../../src/gateway/in-flight.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { DataPathEvents, subscribe } from '../../src/observability/events.js';

const TWO = { maxInFlightPerPrincipal: 2, queue: 3 };
let undo: (() => void) | undefined;
afterEach(() => undo?.());

/** FairShares whose fairness events are collected, in order. */
function shares(): { fair: FairShares; events: string[] } {
  const id = `fair-${Math.random()}`;
  const events: string[] = [];
  undo = subscribe(id, {
    'fairness:wait': (e) => events.push(`${e.upstream}:${e.outcome}`),
    'fairness:queue': (e) => events.push(`${e.upstream}:depth=${e.depth}`),
  });
  return { fair: new FairShares(new DataPathEvents(id)), events };
}

function slotOf(turn: FairSlot | FairWait | undefined): FairSlot {
  if (turn === undefined || turn instanceof FairWait) throw new Error(`expected a slot, got ${String(turn)}`);
  return turn;
}

function waitOf(turn: FairSlot | FairWait | undefined): FairWait {
  if (!(turn instanceof FairWait)) throw new Error('expected a wait');
  return turn;
}

/** Which of `waits` have been given their place, by label, in the order they were given it. */
function order(waits: Record<string, FairWait>): { given: string[]; settle: () => Promise<void> } {
  const given: string[] = [];
  for (const [label, w] of Object.entries(waits))
    w.promise.then(
      () => given.push(label),
      () => given.push(`${label}:failed`),
    );
  return { given, settle: () => new Promise((r) => setImmediate(r)) };
}

describe('FairShares', () => {
  it('an upstream without fairness takes no share and counts nothing', () => {
    const { fair } = shares();
    expect(fair.takesShare('u', undefined)).toBe(false);
    expect(fair.enter('u', undefined, 'a')).toBeUndefined();
    expect(fair.tally('u')).toEqual({ inFlight: 0, queued: 0 });
    expect(fair.takesShare('u', TWO)).toBe(true);
    // Counted under fairness, a call still takes a share after a reload removed it, until none is counted.
    const slot = slotOf(fair.enter('u', TWO, 'a'));
    expect(fair.takesShare('u', undefined)).toBe(true);
    slot.release();
    expect(fair.takesShare('u', undefined)).toBe(false);
  });

  it('gives each principal maxInFlightPerPrincipal places, then makes its calls wait; others go at once', () => {
    const { fair } = shares();
    const a1 = slotOf(fair.enter('u', TWO, 'a'));
    slotOf(fair.enter('u', TWO, 'a'));
    waitOf(fair.enter('u', TWO, 'a'));
    const b1 = slotOf(fair.enter('u', TWO, 'b'));
    expect(fair.tally('u')).toEqual({ inFlight: 3, queued: 1 });
    // Another upstream's share is its own.
    slotOf(fair.enter('v', TWO, 'a'));
    expect(fair.tally('v')).toEqual({ inFlight: 1, queued: 0 });
    a1.release();
    b1.release();
    expect(fair.tally('u')).toEqual({ inFlight: 2, queued: 0 });
  });

  it('lets waiting calls go in turns between principals, each one oldest first', async () => {
    const { fair } = shares();
    // One place each: every release lets exactly one waiting call go.
    const ONE = { maxInFlightPerPrincipal: 1, queue: 5 };
    const a = slotOf(fair.enter('u', ONE, 'a'));
    const b = slotOf(fair.enter('u', ONE, 'b'));
    const waits = {
      a2: waitOf(fair.enter('u', ONE, 'a')),
      a3: waitOf(fair.enter('u', ONE, 'a')),
      b2: waitOf(fair.enter('u', ONE, 'b')),
    };
    const { given, settle } = order(waits);
    b.release();
    a.release();
    await settle();
    expect(given).toEqual(['b2', 'a2']);
    (await waits.a2.promise).release();
    await settle();
    expect(given).toEqual(['b2', 'a2', 'a3']);
  });

  it('serves principals round-robin when a reload frees places for several at once', async () => {
    const { fair } = shares();
    const ONE = { maxInFlightPerPrincipal: 1, queue: 5 };
    slotOf(fair.enter('u', ONE, 'a'));
    slotOf(fair.enter('u', ONE, 'b'));
    const waits = {
      a2: waitOf(fair.enter('u', ONE, 'a')),
      a3: waitOf(fair.enter('u', ONE, 'a')),
      a4: waitOf(fair.enter('u', ONE, 'a')),
      b2: waitOf(fair.enter('u', ONE, 'b')),
      b3: waitOf(fair.enter('u', ONE, 'b')),
    };
    const { given, settle } = order(waits);
    // The reload's bound: 3 each. The next call (c's) comes after the waiting ones have had their turns.
    const THREE = { maxInFlightPerPrincipal: 3, queue: 5 };
    slotOf(fair.enter('u', THREE, 'c'));
    await settle();
    expect(given).toEqual(['a2', 'b2', 'a3', 'b3']);
    expect(fair.tally('u')).toEqual({ inFlight: 7, queued: 1 });
  });

  it('refuses past `queue` waiting calls of one principal with FAIRNESS_QUEUE_FULL; others still wait', () => {
    const { fair, events } = shares();
    const ONE = { maxInFlightPerPrincipal: 1, queue: 2 };
    slotOf(fair.enter('u', ONE, 'a'));
    waitOf(fair.enter('u', ONE, 'a'));
    waitOf(fair.enter('u', ONE, 'a'));
    let refusal: unknown;
    try {
      fair.enter('u', ONE, 'a');
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(GatewayError);
    const body = (refusal as GatewayError).toJsonRpc();
    expect(body).toMatchObject({
      code: -32015,
      data: { type: 'FAIRNESS_QUEUE_FULL', upstream: 'u', retryable: true, retryAfterMs: 1000 },
    });
    expect((refusal as GatewayError).entry.httpStatus).toBe(429);
    slotOf(fair.enter('u', ONE, 'b'));
    waitOf(fair.enter('u', ONE, 'b'));
    expect(fair.tally('u')).toEqual({ inFlight: 2, queued: 3 });
    expect(events).toEqual(['u:queued', 'u:depth=1', 'u:queued', 'u:depth=2', 'u:refused', 'u:queued', 'u:depth=3']);
  });

  it('queue 0: past its share a call is refused at once', () => {
    const { fair } = shares();
    slotOf(fair.enter('u', { maxInFlightPerPrincipal: 1, queue: 0 }, 'a'));
    expect(() => fair.enter('u', { maxInFlightPerPrincipal: 1, queue: 0 }, 'a')).toThrow(/whole share/);
  });

  it('a wait cancelled through the in-flight table leaves the queue, and its place goes to the next', async () => {
    const { fair } = shares();
    const table = new InFlightTable();
    const ONE = { maxInFlightPerPrincipal: 1, queue: 5 };
    const a = slotOf(fair.enter('u', ONE, 'a'));
    const w2 = waitOf(fair.enter('u', ONE, 'a'));
    const w3 = waitOf(fair.enter('u', ONE, 'a'));
    const held2 = table.hold('s\u00002', w2);
    table.hold('s\u00003', w3);
    const { given, settle } = order({ w2, w3 });
    expect(table.cancel('s\u00002', new GatewayError('REQUEST_CANCELLED'))).toBe(true);
    await expect(w2.promise).rejects.toMatchObject({ name: 'GatewayError' });
    table.end('s\u00002', held2);
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 1 });
    // A second cancel of the same wait changes nothing.
    w2.cancel(new Error('again'));
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 1 });
    a.release();
    a.release();
    await settle();
    expect(given).toEqual(['w2:failed', 'w3']);
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 0 });
    // The session ends: a wait of its scope is cancelled too.
    const w4 = waitOf(fair.enter('u', ONE, 'a'));
    table.hold('s\u00004', w4);
    expect(table.cancelScope('s', new GatewayError('REQUEST_CANCELLED', 'Session ended'))).toBe(2);
    await expect(w4.promise).rejects.toThrow('Session ended');
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 0 });
    (await w3.promise).release();
    expect(fair.tally('u')).toEqual({ inFlight: 0, queued: 0 });
  });

  it('a cancel that comes once the place is given marks the wait: the caller gives the place back', async () => {
    const { fair } = shares();
    const ONE = { maxInFlightPerPrincipal: 1, queue: 5 };
    const a = slotOf(fair.enter('u', ONE, 'a'));
    const w = waitOf(fair.enter('u', ONE, 'a'));
    a.release();
    w.cancel(new GatewayError('REQUEST_CANCELLED'));
    const slot = await w.promise;
    expect(w.cancelled).toBeInstanceOf(GatewayError);
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 0 });
    slot.release();
    expect(fair.tally('u')).toEqual({ inFlight: 0, queued: 0 });
  });

  it('a reload that removes fairness lets every waiting call go; calls in flight release their places', async () => {
    const { fair } = shares();
    const ONE = { maxInFlightPerPrincipal: 1, queue: 5 };
    const a = slotOf(fair.enter('u', ONE, 'a'));
    const w = waitOf(fair.enter('u', ONE, 'a'));
    const next = slotOf(fair.enter('u', undefined, 'a'));
    const given = await w.promise;
    expect(fair.tally('u')).toEqual({ inFlight: 3, queued: 0 });
    for (const s of [a, given, next]) s.release();
    expect(fair.tally('u')).toEqual({ inFlight: 0, queued: 0 });
    // Nothing counted and no fairness: the upstream is forgotten, calls take no share again.
    expect(fair.enter('u', undefined, 'a')).toBeUndefined();
  });

  it('a reload that lowers the bound lets calls in flight finish and holds new ones to it', () => {
    const { fair } = shares();
    const FOUR = { maxInFlightPerPrincipal: 4, queue: 5 };
    const held = [1, 2, 3].map(() => slotOf(fair.enter('u', FOUR, 'a')));
    const ONE = { maxInFlightPerPrincipal: 1, queue: 5 };
    const w = waitOf(fair.enter('u', ONE, 'a'));
    held[0]!.release();
    held[1]!.release();
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 1 });
    held[2]!.release();
    expect(fair.tally('u')).toEqual({ inFlight: 1, queued: 0 });
    return w.promise.then((s) => s.release());
  });
});
