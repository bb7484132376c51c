import type { BreakerConfig } from '../../config/schema.js';
import { GatewayError } from '../../jsonrpc/errors.js';
import { Backoff } from '../../timing/backoff.js';

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitStatus {
  circuit: CircuitState;
  consecutiveFailures: number;
  /** While not closed: how long until the circuit lets a probe through. */
  retryAfterMs?: number;
  lastFailure?: string;
  /** When it happened (ISO 8601): an old failure of an upstream that has recovered reads as one. */
  lastFailureAt?: string;
}

/**
 * One remote upstream's circuit breaker, shared by all its workers. Closed: everything goes
 * through; `failureThreshold` consecutive failures open it. Open: every exchange fails at once
 * with UPSTREAM_CIRCUIT_OPEN, so a dead upstream costs callers nothing but an error. After a
 * jittered delay (openMs, doubling per failed probe up to maxOpenMs) it turns half-open and
 * lets one exchange through: its success closes the circuit, its failure opens it again.
 *
 * Outcomes are reported without permits: in half-open only one exchange is let through per
 * `openMs`, so whatever is reported then is that probe's (or a late one that says as much).
 */
export class CircuitBreaker {
  #state: CircuitState = 'closed';
  #failures = 0;
  #openUntil = 0;
  /** Until when the half-open probe let through has the slot to itself. */
  #probeUntil = 0;
  #lastFailure: string | undefined;
  #lastFailureAt = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #backoff: Backoff;
  readonly #listeners = new Set<(state: CircuitState) => void>();

  constructor(
    readonly name: string,
    private readonly config: BreakerConfig,
  ) {
    this.#backoff = new Backoff({ initialMs: config.openMs, maxMs: config.maxOpenMs });
  }

  get state(): CircuitState {
    return this.#state;
  }

  status(): CircuitStatus {
    const retryAfterMs = this.#retryAfterMs();
    return {
      circuit: this.#state,
      consecutiveFailures: this.#failures,
      ...(this.#state !== 'closed' ? { retryAfterMs } : {}),
      ...(this.#lastFailure !== undefined
        ? { lastFailure: this.#lastFailure, lastFailureAt: new Date(this.#lastFailureAt).toISOString() }
        : {}),
    };
  }

  /** Listens to state changes; returns the function that stops listening. */
  onChange(listener: (state: CircuitState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The error a caller gets while the circuit refuses exchanges. */
  openError(): GatewayError {
    return new GatewayError(
      'UPSTREAM_CIRCUIT_OPEN',
      `Upstream ${this.name} is failing (${this.#lastFailure ?? 'too many failures'}); calls fail fast until it ` +
        `recovers`,
      { upstream: this.name, retryAfterMs: this.#retryAfterMs() },
    );
  }

  /** Throws UPSTREAM_CIRCUIT_OPEN unless an exchange may start now (in half-open: as the probe). */
  check(): void {
    if (this.#state === 'closed') return;
    const now = Date.now();
    if (this.#state === 'open' || now < this.#probeUntil) throw this.openError();
    this.#probeUntil = now + this.config.openMs;
  }

  /** The upstream answered like an MCP server. */
  success(): void {
    if (this.#state === 'open') return;
    this.#failures = 0;
    if (this.#state === 'half-open') {
      this.#backoff.reset();
      this.#lastFailure = undefined;
      this.#set('closed');
    }
  }

  /** An exchange failed in a way that says the upstream is unwell. */
  failure(reason: string): void {
    if (this.#state === 'open') return;
    this.#noteFailure(reason);
    this.#failures++;
    if (this.#state === 'half-open' || this.#failures >= this.config.failureThreshold) this.#open();
  }

  /** Opens the circuit now (a health check failed). */
  trip(reason: string): void {
    if (this.#state === 'open') return;
    this.#noteFailure(reason);
    this.#open();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#listeners.clear();
  }

  #noteFailure(reason: string): void {
    this.#lastFailure = reason;
    this.#lastFailureAt = Date.now();
  }

  #open(): void {
    const delay = this.#backoff.next();
    this.#openUntil = Date.now() + delay;
    clearTimeout(this.#timer);
    // A timer, not a lazy check: the health monitor probes as soon as the circuit half-opens.
    this.#timer = setTimeout(() => {
      this.#probeUntil = 0;
      this.#set('half-open');
    }, delay);
    this.#timer.unref();
    this.#set('open');
  }

  #retryAfterMs(): number {
    const now = Date.now();
    if (this.#state === 'open') return Math.max(0, this.#openUntil - now);
    if (this.#state === 'half-open') return Math.max(0, this.#probeUntil - now);
    return 0;
  }

  #set(state: CircuitState): void {
    if (this.#state === state) return;
    this.#state = state;
    for (const l of [...this.#listeners]) l(state);
  }
}
