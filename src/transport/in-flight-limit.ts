import type { InFlightSlots } from '../contracts/request-context.js';

/**
 * Requests that end work, as notifications/cancelled does (which is never counted): one is
 * counted but never refused, so a client at its limit can always stop its own tasks.
 */
const ENDS_WORK: ReadonlySet<string> = new Set(['tasks/cancel']);

/**
 * Requests in flight per client on this replica: a session (2025), or the principal of stateless
 * requests. One client flooding the gateway must not take every worker slot and queue place from
 * the others; past its limit it is told to slow down (429) at once. A task's call keeps its
 * request's place until it ends (keep).
 */
export class InFlightLimit implements InFlightSlots {
  readonly #counts = new Map<string, number>();

  /** `max` 0: no limit. */
  constructor(private max: number) {}

  /** Counts one more request of `client` unless it is at its limit; undefined clients are not limited. */
  acquire(client: string | undefined, method?: string): boolean {
    if (this.max === 0 || client === undefined) return true;
    const n = this.#counts.get(client) ?? 0;
    if (n >= this.max && (method === undefined || !ENDS_WORK.has(method))) return false;
    this.#counts.set(client, n + 1);
    return true;
  }

  /** One more place of `client` whatever its count: the request asking holds one and gives it back right after. */
  keep(client: string): void {
    this.#counts.set(client, (this.#counts.get(client) ?? 0) + 1);
  }

  /** Once per successful acquire, when its request has been answered. */
  release(client: string | undefined): void {
    // Not keyed on `max`: a reload may have changed it while this request was in flight.
    if (client === undefined || !this.#counts.has(client)) return;
    const n = this.#counts.get(client)! - 1;
    if (n <= 0) this.#counts.delete(client);
    else this.#counts.set(client, n);
  }

  get limit(): number {
    return this.max;
  }

  /** A reload's new limit: from the next acquire on (counts of requests in flight stay). */
  set limit(max: number) {
    this.max = max;
  }
}
