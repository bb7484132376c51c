/** An idle timeout and a hard ceiling, as configured per upstream (`timeoutMs`, `maxTimeoutMs`). */
export interface Deadline {
  /** Idle timeout: each sign of life (progress) starts it again. */
  timeoutMs: number;
  /** Hard ceiling from the start, whatever progress says. */
  maxTimeoutMs: number;
}

/**
 * The one idle-plus-hard deadline: fires once when nothing happened for `idleMs`, or at `maxMs`
 * after the start whatever happened. It times one HTTP exchange with an upstream (reset by every
 * chunk) and one client request in flight in the gateway (reset by its progress): progress keeps
 * a long call alive, silence ends it. One timer at a time, re-armed only when it fires, so a
 * touch costs a clock read and nothing else.
 */
export class DeadlineTimer {
  #timer: NodeJS.Timeout | undefined;
  #last: number;
  readonly #hardDeadline: number;
  #done = false;

  constructor(
    readonly idleMs: number,
    readonly maxMs: number,
    private readonly onExpire?: (hard: boolean) => void,
  ) {
    const now = Date.now();
    this.#last = now;
    this.#hardDeadline = now + maxMs;
    this.#arm(Math.min(idleMs, maxMs));
  }

  touch(): void {
    this.#last = Date.now();
  }

  clear(): void {
    this.#done = true;
    clearTimeout(this.#timer);
  }

  /** The deadline passed (`hard`: the ceiling, not idleness). A subclass may act here instead of passing a callback. */
  protected expired(hard: boolean): void {
    this.onExpire?.(hard);
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
    this.expired(now >= this.#hardDeadline);
  }
}
