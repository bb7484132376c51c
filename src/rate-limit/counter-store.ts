/**
 * Where rate-limit counters live: this replica's memory, or Redis (redis-counter-store.ts) when
 * sessions are there, so one count spans every replica.
 *
 * A counter is a fixed window that starts at its first request, with carry-over: it holds up to
 * `limit + burst` admissions, each window refills `limit` of them (all at once, at the window's
 * end), and a fresh counter starts full (nothing used). With burst 0 this is exactly `limit` per window: a count
 * a client can predict (and `retryAfterMs` is exact), which a continuous refill (GCRA, a token
 * bucket dripping) would make fuzzy across a window. Both stores run this same arithmetic.
 */

/** How one counter is sized: what a rule says. */
export interface CounterShape {
  readonly limit: number;
  readonly windowMs: number;
  readonly burst: number;
}

export interface CounterStore {
  /**
   * Takes one admission of `key`'s counter: 0 when admitted, else the ms until the next admission
   * (nothing taken). A promise for a remote store: it rejects when the store fails or is late.
   */
  take(key: string, shape: CounterShape): number | Promise<number>;
  close(): Promise<void>;
}

/**
 * A counter's state: admissions used and not yet refilled, and when its current window started
 * (ms). Used, not left: a reload that changes the rule's limit applies to the count at once.
 */
export interface CounterState {
  used: number;
  start: number;
}

/**
 * One take at `now`, in place: 0 or the wait. `state` undefined: a fresh counter. The Lua script
 * of the Redis store is this function, line for line.
 */
export function takeAt(state: CounterState | undefined, shape: CounterShape, now: number): [CounterState, number] {
  const capacity = shape.limit + shape.burst;
  const s = state ?? { used: 0, start: now };
  const windows = Math.floor((now - s.start) / shape.windowMs);
  if (windows > 0) {
    s.used = Math.max(0, s.used - windows * shape.limit);
    s.start += windows * shape.windowMs;
  }
  if (s.used < capacity) {
    s.used += 1;
    return [s, 0];
  }
  // Windows until one admission is free again: more than one when a reload lowered the limit.
  const until = Math.floor((s.used - capacity) / shape.limit) + 1;
  return [s, Math.max(1, s.start + until * shape.windowMs - now)];
}

/** When `state` is fresh again (nothing used: it may be forgotten). */
export function fullAt(state: CounterState, shape: CounterShape): number {
  return state.start + shape.windowMs * Math.max(1, Math.ceil(state.used / shape.limit));
}

/** How often full counters are swept out of memory. */
const SWEEP_MS = 60_000;

/** This replica's counters: without Redis, each replica counts its own requests. */
export class MemoryCounterStore implements CounterStore {
  readonly #counters = new Map<string, { state: CounterState; fullAt: number }>();
  readonly #sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.#sweep = setInterval(() => this.#forgetFull(), SWEEP_MS);
    this.#sweep.unref();
  }

  take(key: string, shape: CounterShape): number {
    const kept = this.#counters.get(key);
    const now = this.now();
    const [state, wait] = takeAt(kept?.state, shape, now);
    if (kept) kept.fullAt = fullAt(state, shape);
    else this.#counters.set(key, { state, fullAt: fullAt(state, shape) });
    return wait;
  }

  /** Counters held (tests). */
  get size(): number {
    return this.#counters.size;
  }

  #forgetFull(): void {
    const now = this.now();
    for (const [key, c] of this.#counters) if (c.fullAt <= now) this.#counters.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#counters.clear();
  }
}
