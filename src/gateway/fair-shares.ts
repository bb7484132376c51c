/**
 * `upstreams[].fairness`: each principal's share of one upstream's calls on this replica. A
 * principal with `maxInFlightPerPrincipal` calls in flight there has its next ones wait, at most
 * `queue` of them (per principal: a flood fills its own queue, never another's); past that they
 * are refused (FAIRNESS_QUEUE_FULL). Waiting calls are let go in turns between principals, the
 * oldest of each first, as places free. The pool's own queue (which also takes turns) then sees
 * at most a share of any one principal's calls, so another's call finds a free worker at once.
 *
 * Counts are by upstream name, so a reload that changes an upstream (or its fairness) keeps them:
 * calls in flight release the place they took, and the new bounds apply to calls from then on.
 */
import { GatewayError } from '../jsonrpc/errors.js';
import type { FairnessConfig } from '../config/schema.js';
import type { DataPathEvents } from '../observability/events.js';

/** A place of a principal's share, held while its call runs; releasing it again does nothing. */
export interface FairSlot {
  release(): void;
}

/** The retry hint of FAIRNESS_QUEUE_FULL: a place frees when one of the principal's own calls ends. */
const RETRY_AFTER_MS = 1000;

/** One upstream's shares: calls in flight and waiting, by principal. */
interface Shares {
  upstream: string;
  /** The bounds of the last call that came (a reload changes them for the calls after it). */
  limits: FairnessConfig | undefined;
  inFlight: Map<string, number>;
  /** Each waiting principal's calls, oldest first; the map's order is the order of turns. */
  waiting: Map<string, FairWait[]>;
  queued: number;
}

/** A call that waits for a place of its principal's share; `cancel` takes it out of the queue. */
export class FairWait {
  readonly promise: Promise<FairSlot>;
  /** Set when a cancel came after the place was given but before the call went on: it must give it back. */
  cancelled: Error | undefined;
  #resolve!: (slot: FairSlot) => void;
  #reject!: (error: Error) => void;
  #state: 'waiting' | 'given' | 'cancelled' = 'waiting';

  constructor(
    readonly who: string,
    private readonly leave: (wait: FairWait) => void,
  ) {
    this.promise = new Promise<FairSlot>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Still waiting: leaves the queue and fails with `error`. Given a place already: the caller gives it back. */
  cancel(error: Error): void {
    if (this.#state === 'waiting') {
      this.#state = 'cancelled';
      this.leave(this);
      this.#reject(error);
    } else if (this.#state === 'given') {
      this.cancelled ??= error;
    }
  }

  give(slot: FairSlot): void {
    this.#state = 'given';
    this.#resolve(slot);
  }
}

/** Every upstream's shares on this replica; an upstream with no fairness and nothing counted has no entry. */
export class FairShares {
  readonly #byUpstream = new Map<string, Shares>();

  constructor(private readonly diagnostics: DataPathEvents) {}

  /** Whether a call to `upstream` takes a share: it has fairness, or calls of before a reload are still counted. */
  takesShare(upstream: string, limits: FairnessConfig | undefined): boolean {
    return limits !== undefined || this.#byUpstream.has(upstream);
  }

  /**
   * A place for `who`'s call to `upstream` now (a slot), or its turn to wait for one (a FairWait).
   * Throws FAIRNESS_QUEUE_FULL when `who` already has `queue` calls waiting there. `undefined`:
   * this upstream has no fairness and no call counted; nothing to release.
   */
  enter(upstream: string, limits: FairnessConfig | undefined, who: string): FairSlot | FairWait | undefined {
    let shares = this.#byUpstream.get(upstream);
    if (!shares) {
      if (!limits) return undefined;
      shares = { upstream, limits, inFlight: new Map(), waiting: new Map(), queued: 0 };
      this.#byUpstream.set(upstream, shares);
    }
    // A reload that raised the bound (or removed it) lets waiting calls go first: they came before this one.
    if (shares.limits !== limits) {
      shares.limits = limits;
      this.#drain(shares);
    }
    const mine = shares.waiting.get(who);
    if (!mine && (shares.inFlight.get(who) ?? 0) < maxOf(shares)) return this.#take(shares, who);
    if ((mine?.length ?? 0) >= (limits?.queue ?? 0)) {
      this.diagnostics.emit('fairness:wait', { upstream, outcome: 'refused' });
      throw new GatewayError(
        'FAIRNESS_QUEUE_FULL',
        `Upstream ${upstream}: this principal has ${shares.inFlight.get(who) ?? 0} calls in flight and ` +
          `${mine?.length ?? 0} waiting, its whole share (fairness)`,
        { upstream, retryAfterMs: RETRY_AFTER_MS },
      );
    }
    const wait = new FairWait(who, (w) => this.#leave(shares, w));
    if (mine) mine.push(wait);
    else shares.waiting.set(who, [wait]);
    shares.queued++;
    this.diagnostics.emit('fairness:wait', { upstream, outcome: 'queued' });
    this.diagnostics.emit('fairness:queue', { upstream, depth: shares.queued });
    return wait;
  }

  /** Calls in flight and waiting on `upstream` (tests read it). */
  tally(upstream: string): { inFlight: number; queued: number } {
    const shares = this.#byUpstream.get(upstream);
    let inFlight = 0;
    for (const n of shares?.inFlight.values() ?? []) inFlight += n;
    return { inFlight, queued: shares?.queued ?? 0 };
  }

  #take(shares: Shares, who: string): FairSlot {
    shares.inFlight.set(who, (shares.inFlight.get(who) ?? 0) + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = shares.inFlight.get(who)! - 1;
        if (left > 0) shares.inFlight.set(who, left);
        else shares.inFlight.delete(who);
        this.#drain(shares);
      },
    };
  }

  /** Gives free places to waiting calls, one per principal per turn, until no waiting principal has one free. */
  #drain(shares: Shares): void {
    const max = maxOf(shares);
    let gave = shares.queued > 0;
    while (gave && shares.queued > 0) {
      gave = false;
      for (const who of [...shares.waiting.keys()]) {
        if ((shares.inFlight.get(who) ?? 0) >= max) continue;
        const list = shares.waiting.get(who)!;
        const wait = list.shift()!;
        // Its turn is over: to the back of the order, or out of it with nothing left waiting.
        shares.waiting.delete(who);
        if (list.length > 0) shares.waiting.set(who, list);
        shares.queued--;
        wait.give(this.#take(shares, who));
        gave = true;
      }
    }
    this.diagnostics.emit('fairness:queue', { upstream: shares.upstream, depth: shares.queued });
    this.#forget(shares);
  }

  #leave(shares: Shares, wait: FairWait): void {
    const list = shares.waiting.get(wait.who);
    const i = list ? list.indexOf(wait) : -1;
    if (!list || i === -1) return;
    list.splice(i, 1);
    if (list.length === 0) shares.waiting.delete(wait.who);
    shares.queued--;
    this.diagnostics.emit('fairness:queue', { upstream: shares.upstream, depth: shares.queued });
    this.#forget(shares);
  }

  /** An upstream whose fairness a reload removed, once nothing is counted there any more, costs nothing again. */
  #forget(shares: Shares): void {
    if (shares.inFlight.size === 0 && shares.queued === 0 && this.#byUpstream.get(shares.upstream) === shares)
      this.#byUpstream.delete(shares.upstream);
  }
}

function maxOf(shares: Shares): number {
  return shares.limits?.maxInFlightPerPrincipal ?? Infinity;
}
