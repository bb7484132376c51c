import { GatewayError } from '../jsonrpc/errors.js';
import type { UpstreamCall } from '../contracts/upstream.js';
import type { RequestKey } from '../contracts/request-context.js';

export interface Deadline {
  /** Idle timeout: each sign of life (progress) starts it again. */
  timeoutMs: number;
  /** Hard ceiling from the start of the call, whatever progress says. */
  maxTimeoutMs: number;
}

class Tracked {
  call: UpstreamCall | undefined;
  lastActivity: number;
  readonly hardDeadline: number;
  timer: NodeJS.Timeout | undefined;

  constructor(readonly deadline: Deadline, now: number) {
    this.lastActivity = now;
    this.hardDeadline = now + deadline.maxTimeoutMs;
  }

  touch(): void {
    this.lastActivity = Date.now();
  }
}

/**
 * Every client request the gateway has forwarded and not yet answered, by (scope, client id):
 * the one place where timeouts and cancellation happen, whatever the upstream transport.
 */
export class InFlightTable {
  readonly #calls = new Map<RequestKey, Tracked>();

  get size(): number {
    return this.#calls.size;
  }

  has(key: RequestKey): boolean {
    return this.#calls.has(key);
  }

  /** Reserves `key`; `attach` the upstream call once it exists. */
  begin(key: RequestKey, deadline: Deadline): Tracked {
    const tracked = new Tracked(deadline, Date.now());
    this.#calls.set(key, tracked);
    tracked.timer = setTimeout(() => this.#onTimer(key, tracked), deadline.timeoutMs);
    return tracked;
  }

  end(key: RequestKey, tracked: Tracked): void {
    clearTimeout(tracked.timer);
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

  #onTimer(key: RequestKey, tracked: Tracked): void {
    const now = Date.now();
    const due = Math.min(tracked.lastActivity + tracked.deadline.timeoutMs, tracked.hardDeadline);
    if (due > now) {
      tracked.timer = setTimeout(() => this.#onTimer(key, tracked), due - now);
      return;
    }
    const hard = now >= tracked.hardDeadline;
    tracked.call?.cancel(
      new GatewayError(
        'UPSTREAM_TIMEOUT',
        hard
          ? `Upstream did not answer within the hard limit of ${tracked.deadline.maxTimeoutMs} ms`
          : `Upstream did not answer within ${tracked.deadline.timeoutMs} ms`,
      ),
    );
  }
}
