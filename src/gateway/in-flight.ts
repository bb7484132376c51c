import { GatewayError } from '../jsonrpc/errors.js';
import type { UpstreamCall } from '../contracts/upstream.js';
import type { RequestKey } from '../contracts/request-context.js';
import { DeadlineTimer, type Deadline } from '../timing/deadline-timer.js';

export type { Deadline };

/** One request in flight: its deadline, and the upstream call it ends when that passes. */
class Tracked extends DeadlineTimer {
  call: UpstreamCall | undefined;

  constructor(deadline: Deadline) {
    super(deadline.timeoutMs, deadline.maxTimeoutMs);
  }

  protected override expired(hard: boolean): void {
    this.call?.cancel(
      new GatewayError(
        'UPSTREAM_TIMEOUT',
        hard
          ? `Upstream did not answer within the hard limit of ${this.maxMs} ms`
          : `Upstream did not answer within ${this.idleMs} ms`,
      ),
    );
  }
}

/** What the table cancels: a call on its way (Tracked), or one still waiting for its turn (Held). */
interface Entry {
  readonly call: { cancel(error: Error): void } | undefined;
  clear(): void;
}

/** A request waiting its turn before any upstream call (upstreams[].fairness): no deadline runs yet. */
class Held implements Entry {
  constructor(readonly call: { cancel(error: Error): void }) {}

  clear(): void {}
}

/**
 * Every client request the gateway has forwarded and not yet answered, by (scope, client id):
 * the one place where timeouts and cancellation happen, whatever the upstream transport.
 */
export class InFlightTable {
  readonly #calls = new Map<RequestKey, Entry>();

  get size(): number {
    return this.#calls.size;
  }

  has(key: RequestKey): boolean {
    return this.#calls.has(key);
  }

  /** Reserves `key`; `attach` the upstream call once it exists. */
  begin(key: RequestKey, deadline: Deadline): Tracked {
    const tracked = new Tracked(deadline);
    this.#calls.set(key, tracked);
    return tracked;
  }

  /**
   * Reserves `key` for a request that waits its turn: a cancellation (of it, its scope, or all) reaches `waiting`.
   * `end` it before the call `begin`s.
   */
  hold(key: RequestKey, waiting: { cancel(error: Error): void }): Entry {
    const held = new Held(waiting);
    this.#calls.set(key, held);
    return held;
  }

  end(key: RequestKey, tracked: Entry): void {
    tracked.clear();
    if (this.#calls.get(key) === tracked) this.#calls.delete(key);
  }

  cancel(key: RequestKey, error: Error): boolean {
    const tracked = this.#calls.get(key);
    if (!tracked) return false;
    tracked.call?.cancel(error);
    return true;
  }

  /** Cancels everything in flight for one scope (a session that ended). */
  cancelScope(scope: string, error: Error): number {
    const prefix = `${scope}\u0000`;
    let n = 0;
    for (const [key, tracked] of this.#calls) {
      if (key.startsWith(prefix)) {
        tracked.call?.cancel(error);
        n++;
      }
    }
    return n;
  }

  cancelAll(error: Error): void {
    for (const tracked of this.#calls.values()) tracked.call?.cancel(error);
  }
}
