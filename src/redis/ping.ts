import type { Logger } from '../observability/logger.js';

export interface RedisPingOptions {
  /** Time between PINGs. */
  intervalMs: number;
  /** A PING without a reply within this long counts as unanswered. */
  timeoutMs: number;
  /** Whether to ask now: while the connection itself is down its state already says so. */
  connected: () => boolean;
  log?: Logger;
}

/**
 * Asks Redis PING every few seconds, with a deadline. A Redis that keeps its connections open
 * but does not answer (stopped, swapping, stuck in a slow script) leaves the client "ready"
 * while every command times out: only an unanswered question shows it. `answering` is the
 * verdict of the last PING that finished or ran out of time.
 */
export class RedisPing {
  #answering = true;
  #asking = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly options: RedisPingOptions,
  ) {
    this.#timer = setInterval(() => void this.check(), options.intervalMs);
    this.#timer.unref();
  }

  get answering(): boolean {
    return this.#answering;
  }

  /** One PING; resolves with the verdict. A PING still out when the next one is due is not doubled. */
  async check(): Promise<boolean> {
    if (this.#asking) return this.#answering;
    if (!this.options.connected()) {
      // A new connection answers or fails on its own; the next PING asks it.
      this.#answering = true;
      return true;
    }
    this.#asking = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.options.timeoutMs);
    });
    try {
      const answered = await Promise.race([
        this.ping().then(
          () => true,
          () => false,
        ),
        deadline,
      ]);
      this.#report(answered);
      this.#answering = answered;
    } finally {
      clearTimeout(timer);
      this.#asking = false;
    }
    return this.#answering;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #report(answered: boolean): void {
    if (answered === this.#answering) return;
    if (answered) this.options.log?.info('session store: Redis answers PING again');
    else
      this.options.log?.warn(
        { timeoutMs: this.options.timeoutMs },
        'session store: Redis did not answer PING in time: not ready',
      );
  }
}
