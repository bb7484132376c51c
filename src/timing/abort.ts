/**
 * Aborts HTTP exchanges with an upstream: AbortController's job, with one listener at a time
 * and no EventTarget. The call path makes one per upstream call, and there an AbortController
 * with its listener measured ~30 µs of CPU per call, a sixth of all the gateway spent
 * (load/: call-http, and the A/B in the commit that brought this in).
 */
export class Abort {
  #aborted = false;
  #reason: unknown;
  #listener: ((reason: unknown) => void) | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why it was aborted (undefined while it was not). */
  get reason(): unknown {
    return this.#reason;
  }

  abort(reason: unknown = new Error('aborted')): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.(reason);
  }

  /**
   * Calls `fn` on abort (at once when already aborted); the returned function stops that. One
   * exchange at a time listens: an Abort shared by exchanges in turn (a stream that reconnects)
   * is fine, two at once is a bug and throws.
   */
  listen(fn: (reason: unknown) => void): () => void {
    if (this.#aborted) {
      fn(this.#reason);
      return noop;
    }
    if (this.#listener !== undefined) throw new Error('Abort already has a listener');
    this.#listener = fn;
    return () => {
      if (this.#listener === fn) this.#listener = undefined;
    };
  }
}

function noop(): void {}
