/**
 * Where quota counts live: this replica's memory, or Redis (redis-quota-store.ts) when sessions
 * are there, so one count spans every replica and outlives a restart. A count belongs to one
 * quota, one window (its id) and one principal; a window's counts are forgotten once it is over.
 */

/** One principal's counts in one window of one quota. */
export interface QuotaCounter {
  quota: string;
  /** The window's id (windows.ts): a new window is new counts. */
  window: string;
  who: string;
  /** When the window ends (ms): its counts may be forgotten from then on. */
  expireAt: number;
}

/** What a quota allows per window; a measure it leaves out is neither counted nor checked. */
export interface QuotaLimits {
  calls: number | undefined;
  upstreamSeconds: number | undefined;
}

export type QuotaMeasure = 'calls' | 'upstreamSeconds';

/** Whether a call is admitted (its call then counted), or the measure that is used up. */
export type QuotaVerdict = 'ok' | QuotaMeasure;

export interface QuotaUse {
  who: string;
  used: number;
}

export interface QuotaStore {
  /**
   * Admits one call of `counter`'s principal when no measure of `limits` is used up, counting the
   * call (calls limited) in the same step: replicas at once admit exactly `limits.calls`.
   */
  admit(counter: QuotaCounter, limits: QuotaLimits): QuotaVerdict | Promise<QuotaVerdict>;
  /** Adds a call's time upstream, as it ended. */
  addSeconds(counter: QuotaCounter, seconds: number): void | Promise<void>;
  /** The `n` principals who used most of `measure` in the window, most first. */
  top(quota: string, window: string, measure: QuotaMeasure, n: number): QuotaUse[] | Promise<QuotaUse[]>;
  close(): Promise<void>;
}

interface WindowCounts {
  expireAt: number;
  used: Map<string, { calls: number; upstreamSeconds: number }>;
}

/** This replica's counts: without Redis, each replica counts its own calls, and a restart forgets them. */
export class MemoryQuotaStore implements QuotaStore {
  readonly #windows = new Map<string, WindowCounts>();

  constructor(private readonly now: () => number = Date.now) {}

  admit(counter: QuotaCounter, limits: QuotaLimits): QuotaVerdict {
    const used = this.#used(counter);
    if (limits.upstreamSeconds !== undefined && used.upstreamSeconds >= limits.upstreamSeconds)
      return 'upstreamSeconds';
    if (limits.calls !== undefined) {
      if (used.calls >= limits.calls) return 'calls';
      used.calls++;
    }
    return 'ok';
  }

  addSeconds(counter: QuotaCounter, seconds: number): void {
    this.#used(counter).upstreamSeconds += seconds;
  }

  top(quota: string, window: string, measure: QuotaMeasure, n: number): QuotaUse[] {
    const counts = this.#windows.get(windowKey(quota, window));
    if (!counts || counts.expireAt <= this.now()) return [];
    return [...counts.used]
      .map(([who, u]) => ({ who, used: u[measure] }))
      .filter((u) => u.used > 0)
      .sort(byUse)
      .slice(0, n);
  }

  /** Windows held (tests: an ended one is forgotten). */
  get windows(): number {
    return this.#windows.size;
  }

  #used(counter: QuotaCounter): { calls: number; upstreamSeconds: number } {
    const key = windowKey(counter.quota, counter.window);
    let counts = this.#windows.get(key);
    if (!counts) {
      // A new window: the ended ones go (no timer: windows start seldom).
      const now = this.now();
      for (const [k, c] of this.#windows) if (c.expireAt <= now) this.#windows.delete(k);
      counts = { expireAt: counter.expireAt, used: new Map() };
      this.#windows.set(key, counts);
    }
    let used = counts.used.get(counter.who);
    if (!used) counts.used.set(counter.who, (used = { calls: 0, upstreamSeconds: 0 }));
    return used;
  }

  async close(): Promise<void> {
    this.#windows.clear();
  }
}

/** Most used first; a tie by name, as both stores order it. */
export const byUse = (a: QuotaUse, b: QuotaUse): number =>
  b.used - a.used || (a.who < b.who ? -1 : a.who > b.who ? 1 : 0);

/** Quota names hold no newline (the schema's pattern). */
const windowKey = (quota: string, window: string) => `${quota}\n${window}`;
