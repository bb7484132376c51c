/**
 * Keeps a repeated event out of the log: the first of a run is logged, later ones at most once
 * per `intervalMs`, and each such line says how many were left out since the one before. An
 * upstream that cannot start is retried forever; its log should not grow with every attempt.
 * Keys are a small fixed set per owner (an upstream's kinds of failure), never client input.
 */
export class LogThrottle {
  readonly #runs = new Map<string, { loggedAt: number; suppressed: number }>();

  constructor(readonly intervalMs = 60_000) {}

  /**
   * One more `key` event. undefined: leave it out of the log (it is counted); a number: log it,
   * with that many left out since the last line.
   */
  take(key: string, now = Date.now()): number | undefined {
    const run = this.#runs.get(key);
    if (!run) {
      this.#runs.set(key, { loggedAt: now, suppressed: 0 });
      return 0;
    }
    if (now - run.loggedAt < this.intervalMs) {
      run.suppressed++;
      return undefined;
    }
    const suppressed = run.suppressed;
    run.loggedAt = now;
    run.suppressed = 0;
    return suppressed;
  }

  /** The run is over (the upstream started): the next event is logged at once. Returns how many were never reported. */
  reset(key: string): number {
    const run = this.#runs.get(key);
    this.#runs.delete(key);
    return run?.suppressed ?? 0;
  }
}

/** `{ suppressed: n }` for a log line that stands for n more, nothing for a first one. */
export function suppressedField(suppressed: number): { suppressed?: number } {
  return suppressed > 0 ? { suppressed } : {};
}
