/** Exponential backoff with full jitter, so restarting replicas do not stampede an upstream. */
export class Backoff {
  #attempt = 0;

  constructor(private readonly options: { initialMs: number; maxMs: number; random?: () => number }) {}

  /** The delay before the next attempt; each call doubles the ceiling up to maxMs. */
  next(): number {
    const ceiling = this.peekMs();
    this.#attempt++;
    const random = this.options.random ?? Math.random;
    return Math.round(ceiling / 2 + (random() * ceiling) / 2);
  }

  /** The ceiling of the next delay, without consuming an attempt (a retry hint for clients). */
  peekMs(): number {
    return Math.min(this.options.maxMs, this.options.initialMs * 2 ** Math.min(this.#attempt, 30));
  }

  reset(): void {
    this.#attempt = 0;
  }
}
