import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import type { CallOptions, ClientIdentity, Upstream, UpstreamCall, UpstreamServerInfo } from '../contracts/upstream.js';
import { failedCall } from '../contracts/deferred-call.js';
import { hasModernMeta, refusesModern, type CacheHints, type ModernSet } from './modern-set.js';
import type { PoolStatus, UpstreamCaller, WorkerSet } from './worker-set.js';

type Era = 'unknown' | 'modern' | 'session';

/**
 * An upstream with `protocolVersion: auto`: which era it speaks is learned before anything else
 * reaches it. server/discover first (2026-07-28); an upstream that refuses it (an error answer,
 * a 4xx, no version the gateway speaks) is spoken to in 2025, by initialize, and that is
 * logged. One that cannot be reached is asked again later. A dual-era upstream is both: its
 * stateless clients' calls go the modern way, its 2025 clients keep their session path.
 */
export class EraSet implements WorkerSet {
  #era: Era = 'unknown';
  #learning: Promise<void> | undefined;
  readonly #infoListeners: Array<(info: UpstreamServerInfo) => void> = [];

  constructor(
    private readonly session: WorkerSet,
    private readonly modern: ModernSet,
    /** How the gateway introduces itself when it starts the 2025 side by itself (a fall-back found late). */
    private readonly identity: ClientIdentity,
    private readonly log: Logger,
  ) {
    // Found by a background retry or the health probe, not by #learn (which falls back itself).
    modern.onRefused((err) => {
      if (this.#era !== 'unknown' || this.#learning) return;
      this.#fallBack(err);
      this.session.probe(this.identity, async () => this.session.info).then(
        (info) => {
          if (info) for (const l of this.#infoListeners) l(info);
        },
        (e: unknown) => this.log.warn({ upstream: this.name, err: e instanceof Error ? e.message : String(e) }, 'upstream did not start over 2025 either'),
      );
    });
    session.onInfo((info) => {
      if (this.#era === 'session') for (const l of this.#infoListeners) l(info);
    });
    // Down at start-up, found later: whichever era it then speaks, the catalog hears of it.
    modern.onInfo((info) => {
      if (this.#era === 'unknown') this.#era = 'modern';
      if (this.#era === 'modern') for (const l of this.#infoListeners) l(info);
    });
  }

  get name(): string {
    return this.session.name;
  }

  /** The learned era, for /readyz and tests. */
  get era(): Era {
    return this.#era;
  }

  get speaksModern(): boolean {
    return this.#era === 'modern';
  }

  get dualEra(): boolean {
    return this.#era === 'modern' && this.modern.dualEra;
  }

  /** A 2026-only upstream has no workers per scope; a 2025 one has them as its mode says. */
  get perScope(): boolean {
    return this.#era === 'modern' && !this.modern.dualEra ? false : this.session.perScope;
  }

  get info(): UpstreamServerInfo | undefined {
    return this.#era === 'modern' ? this.modern.info : this.#era === 'session' ? this.session.info : undefined;
  }

  get scopes(): number {
    return this.session.scopes;
  }

  onInfo(listener: (info: UpstreamServerInfo) => void): void {
    this.#infoListeners.push(listener);
  }

  hints(method: string): CacheHints | undefined {
    return this.#era === 'modern' ? this.modern.hints(method) : undefined;
  }

  status(): PoolStatus {
    if (this.#era === 'modern') return this.modern.dualEra ? this.#dualStatus() : this.modern.status();
    const status = this.session.status();
    if (this.#era === 'unknown') return { ...status, state: status.state === 'closed' ? 'closed' : this.modern.status().state === 'down' ? 'down' : 'starting', ...this.#lastError() };
    return { ...status, era: 'session', ...(this.session.info ? { protocolVersion: this.session.info.protocolVersion } : {}) };
  }

  async probe<T>(identity: ClientIdentity, use: (caller: UpstreamCaller) => Promise<T>): Promise<T> {
    await this.#learn();
    return this.#era === 'modern' ? this.modern.probe(identity, use) : this.session.probe(identity, use);
  }

  call(method: string, params: Record<string, unknown> | undefined, options: CallOptions | undefined, scope: string, identity: () => ClientIdentity): UpstreamCall {
    if (this.#era === 'unknown') return failedCall(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.name} has not answered yet`));
    // A dual-era upstream: a 2025 client's call (no 2026 _meta) keeps its session.
    if (this.#era === 'modern' && (!this.modern.dualEra || hasModernMeta(params))) return this.modern.call(method, params, options);
    return this.session.call(method, params, options, scope, identity);
  }

  workerOf(scope: string): Upstream | undefined {
    return this.session.workerOf(scope);
  }

  release(scope: string, reason?: string): Promise<void> {
    return this.session.release(scope, reason);
  }

  setYielded(scope: string, yielded: boolean): void {
    this.session.setYielded?.(scope, yielded);
  }

  async close(): Promise<void> {
    await Promise.all([this.session.close(), this.modern.close()]);
  }

  #lastError(): { lastError?: string; lastErrorAt?: string } {
    const { lastError, lastErrorAt } = this.modern.status();
    return lastError ? { lastError, ...(lastErrorAt ? { lastErrorAt } : {}) } : {};
  }

  /** Both sides: stateless calls in flight, and the sessions (workers) its 2025 clients keep. */
  #dualStatus(): PoolStatus {
    const modern = this.modern.status();
    const session = this.session.status();
    const clientRequests = session.clientRequests !== undefined ? { clientRequests: session.clientRequests } : {};
    const inFlight = modern.inFlight + session.inFlight;
    const { workers, ready, queued } = session;
    return { ...modern, workers, ready, inFlight, queued, ...clientRequests, dualEra: true };
  }

  #fallBack(err: unknown): void {
    this.#era = 'session';
    this.log.warn({ upstream: this.name, err: err instanceof Error ? err.message : String(err) }, 'server/discover failed: speaking 2025 (initialize) to this upstream');
  }

  /** Learns the era once (at a time); an unreachable upstream leaves it unknown, to learn on the next try. */
  #learn(): Promise<void> {
    if (this.#era !== 'unknown') return Promise.resolve();
    this.#learning ??= this.modern
      .discover()
      .then(
        () => {
          this.#era = 'modern';
        },
        (err: unknown) => {
          if (!refusesModern(err)) throw err;
          if (this.#era === 'unknown') this.#fallBack(err);
        },
      )
      .finally(() => {
        this.#learning = undefined;
      });
    return this.#learning;
  }
}
