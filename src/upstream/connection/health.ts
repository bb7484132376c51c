import type { Logger } from 'pino';
import type { HealthConfig } from '../../config/schema.js';
import { GatewayError, UpstreamRpcError } from '../../jsonrpc/errors.js';
import type { DataPathEvents } from '../../observability/events.js';
import type { CircuitBreaker, CircuitState, CircuitStatus } from './circuit-breaker.js';
import type { UpstreamConnection } from '../../contracts/upstream.js';

/** When a half-open probe could not get through (another exchange held the slot), try again after this. */
const HALF_OPEN_RETRY_MS = 1000;

/** Whether a remote upstream is up, as the rest of the gateway sees it. */
export interface UpstreamHealth {
  /** false while its circuit is open or half-open: its entries are out of the catalog. */
  readonly available: boolean;
  onChange(listener: (available: boolean) => void): void;
  status(): CircuitStatus;
}

export interface HealthMonitorOptions {
  name: string;
  config: HealthConfig;
  breaker: CircuitBreaker;
  /** A session of the gateway's own, used only for pings (and dropped after a failed one). */
  createProbe: () => UpstreamConnection;
  log: Logger;
  diagnostics: DataPathEvents;
}

/**
 * Pings a remote upstream every `intervalMs` while it is up, so an outage is noticed without
 * client traffic, and probes it as soon as its circuit half-opens, so a recovery is noticed
 * even though its tools have left the catalog and nobody calls them. A failed ping opens the
 * circuit at once (a ping is already retried as the retry policy allows).
 */
export class HealthMonitor implements UpstreamHealth {
  #probe: UpstreamConnection | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  #closed = false;
  #available = true;
  readonly #listeners: Array<(available: boolean) => void> = [];

  constructor(private readonly options: HealthMonitorOptions) {}

  get available(): boolean {
    return this.#available;
  }

  onChange(listener: (available: boolean) => void): void {
    this.#listeners.push(listener);
  }

  status(): CircuitStatus {
    return this.options.breaker.status();
  }

  start(): void {
    const { breaker } = this.options;
    breaker.onChange((state) => {
      this.#gauge(state);
      if (state === 'half-open') void this.check();
      this.#setAvailable(state === 'closed');
    });
    // Failed starts at gateway start-up may have opened the circuit already.
    this.#gauge(breaker.state);
    this.#setAvailable(breaker.state === 'closed');
    void this.check();
  }

  #setAvailable(available: boolean): void {
    const { breaker, log, name } = this.options;
    if (available === this.#available) return;
    this.#available = available;
    if (available) log.info({ upstream: name }, 'upstream recovered');
    else log.warn({ upstream: name, ...breaker.status() }, 'upstream is down; calls fail fast until it recovers');
    for (const l of this.#listeners) l(available);
  }

  /** Pings once; true when the upstream answered. */
  async check(): Promise<boolean> {
    if (this.#checking || this.#closed) return false;
    this.#checking = true;
    const { breaker, config } = this.options;
    try {
      let probe = this.#probe;
      if (!probe) {
        const fresh = this.options.createProbe();
        this.#probe = probe = fresh;
        fresh.onExit(() => {
          if (this.#probe === fresh) this.#probe = undefined;
        });
        await fresh.start();
      }
      const call = probe.call('ping', undefined);
      const timer = setTimeout(
        () => call.cancel(new GatewayError('UPSTREAM_TIMEOUT', `no answer to ping within ${config.timeoutMs} ms`)),
        config.timeoutMs,
      );
      try {
        await call.promise;
      } finally {
        clearTimeout(timer);
      }
      return true;
    } catch (err) {
      // An error answer is an answer: the upstream is there. A gateway shutting down is not news.
      if (err instanceof UpstreamRpcError) return true;
      if (this.#closed) return false;
      // One that serves users only (per-session workers opened as each user) refuses the gateway's own: it answered.
      const refusesGateway = err instanceof GatewayError && err.type === 'UPSTREAM_IDENTITY_REFUSED';
      if (!refusesGateway && !(err instanceof GatewayError && err.type === 'UPSTREAM_CIRCUIT_OPEN')) {
        breaker.trip(`health check failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      // A fresh session next time: this one may be what is broken (and a refused one never started).
      const stale = this.#probe;
      this.#probe = undefined;
      void stale?.close();
      return refusesGateway;
    } finally {
      this.#checking = false;
      this.#schedule(breaker.state === 'half-open' ? HALF_OPEN_RETRY_MS : config.intervalMs);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#probe?.close();
    this.#probe = undefined;
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    if (this.#closed || ms <= 0) return;
    this.#timer = setTimeout(() => {
      // While open, the half-open transition starts the next check.
      if (this.options.breaker.state !== 'open') void this.check();
    }, ms);
    this.#timer.unref();
  }

  #gauge(current: CircuitState): void {
    this.options.diagnostics.emit('upstream:circuit', { upstream: this.options.name, state: current });
  }
}
