/**
 * Fires once when nothing happened for `idleMs`, or at `maxMs` after the start whatever
 * happened: the deadline of one HTTP exchange, reset by every chunk that arrives (progress
 * keeps a long call alive; silence ends it).
 */
export class IdleTimer {
  #timer: NodeJS.Timeout | undefined;
  #last = Date.now();
  readonly #hardDeadline: number;
  #done = false;

  constructor(
    private readonly idleMs: number,
    maxMs: number,
    private readonly onExpire: (hard: boolean) => void,
  ) {
    this.#hardDeadline = Date.now() + maxMs;
    this.#arm(Math.min(idleMs, maxMs));
  }

  touch(): void {
    this.#last = Date.now();
  }

  clear(): void {
    this.#done = true;
    clearTimeout(this.#timer);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#check(), ms);
    this.#timer.unref();
  }

  #check(): void {
    if (this.#done) return;
    const now = Date.now();
    const due = Math.min(this.#last + this.idleMs, this.#hardDeadline);
    if (due > now) {
      this.#arm(due - now);
      return;
    }
    this.#done = true;
    this.onExpire(now >= this.#hardDeadline);
  }
}
