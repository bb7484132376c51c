/**
 * The gateway's one backoff: exponential with full jitter, so restarting replicas do not
 * stampede an upstream or a Redis. Upstream restarts, retries and circuit delays use the
 * stateful `Backoff`; a client that counts its own attempts (ioredis) uses `backoffDelay`.
 */

/** The ceiling of the delay before retry `attempt` (0 for the first): initialMs doubling up to maxMs. */
function ceilingMs(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
}

/** The delay before retry `attempt` (0 for the first): between half the ceiling and all of it. */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = ceilingMs(attempt, initialMs, maxMs);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export class Backoff {
  #attempt = 0;

  constructor(private readonly options: { initialMs: number; maxMs: number; random?: () => number }) {}

  /** The delay before the next attempt; each call doubles the ceiling up to maxMs. */
  next(): number {
    const { initialMs, maxMs, random } = this.options;
    return backoffDelay(this.#attempt++, initialMs, maxMs, random);
  }

  /** The ceiling of the next delay, without consuming an attempt (a retry hint for clients). */
  peekMs(): number {
    return ceilingMs(this.#attempt, this.options.initialMs, this.options.maxMs);
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Waits `ms` between retries without keeping the process alive for it. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
