import type { Logger } from 'pino';
import type { PoolConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { LogThrottle, suppressedField } from '../observability/log-throttle.js';
import type { Metrics } from '../observability/metrics.js';
import { Backoff } from './backoff.js';
import type { CircuitState } from './circuit-breaker.js';
import { DeferredCall, failedCall } from '../contracts/deferred-call.js';
import type { CallOptions, Upstream, UpstreamCall, UpstreamServerInfo } from '../contracts/upstream.js';

interface Worker {
  upstream: Upstream;
  ready: boolean;
  startedAt: number;
  idleSince: number;
}

export type PoolState = 'starting' | 'ready' | 'down' | 'closed';

export interface PoolStatus {
  state: PoolState;
  workers: number;
  ready: number;
  inFlight: number;
  queued: number;
  /** Per-session upstreams: requests their workers made of clients, not answered yet. */
  clientRequests?: number;
  lastError?: string;
  /** A remote upstream's circuit breaker (see circuit-breaker.ts); absent for stdio. */
  circuit?: CircuitState;
  consecutiveFailures?: number;
  retryAfterMs?: number;
  lastFailure?: string;
}

/**
 * N workers of one upstream: least-in-flight selection, `maxInFlight` per worker, a bounded
 * queue with a timeout, restarts with backoff. A full queue fails fast with a retryable error:
 * back-pressure, not buffering.
 */
export class UpstreamPool {
  readonly #workers: Worker[] = [];
  readonly #queue: DeferredCall[] = [];
  #starting = 0;
  #spawned = 0;
  #info: UpstreamServerInfo | undefined;
  #lastError: string | undefined;
  #closed = false;
  #restartTimer: NodeJS.Timeout | undefined;
  readonly #backoff = new Backoff({ initialMs: 100, maxMs: 10_000 });
  readonly #reaper: NodeJS.Timeout;
  readonly #infoListeners: Array<(info: UpstreamServerInfo) => void> = [];

  constructor(
    readonly name: string,
    private readonly config: PoolConfig,
    private readonly createWorker: (index: number) => Upstream,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    /** An upstream that cannot start is retried forever: its failures are logged at this pace. */
    private readonly throttle: LogThrottle = new LogThrottle(),
  ) {
    this.#reaper = setInterval(() => this.#reapIdle(), Math.max(1000, Math.floor(config.idleTimeoutMs / 2)));
    this.#reaper.unref();
  }

  /** What the upstream said at initialize (from its first worker). */
  get info(): UpstreamServerInfo | undefined {
    return this.#info;
  }

  status(): PoolStatus {
    const ready = this.#workers.filter((w) => w.ready).length;
    let state: PoolState;
    if (this.#closed) state = 'closed';
    else if (ready > 0 || (this.config.min === 0 && this.#info && !this.#lastError)) state = 'ready';
    else if (this.#info === undefined && this.#lastError === undefined) state = 'starting';
    else state = 'down';
    return {
      state,
      workers: this.#workers.length,
      ready,
      inFlight: this.#workers.reduce((n, w) => n + w.upstream.inFlight, 0),
      queued: this.#queue.length,
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  /** Starts `min` workers (at least one, to learn the upstream's capabilities). */
  async start(): Promise<UpstreamServerInfo> {
    // Called again on every catalog refresh: a running pool must not grow by `min` each time.
    if (this.#info && this.#workers.some((w) => w.ready)) return this.#info;
    const first = Math.max(1, this.config.min);
    const results = await Promise.allSettled(Array.from({ length: first }, () => this.#spawn()));
    const ok = results.find((r) => r.status === 'fulfilled');
    if (!ok || !this.#info) {
      const failure = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      this.#scheduleRestart();
      throw failure?.reason instanceof Error ? failure.reason : new Error(String(failure?.reason));
    }
    return this.#info;
  }

  onInfo(listener: (info: UpstreamServerInfo) => void): void {
    this.#infoListeners.push(listener);
  }

  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    if (this.#closed) return failedCall(new GatewayError('SHUTTING_DOWN'));
    const worker = this.#pick();
    if (worker) return this.#dispatch(worker, method, params, options);

    if (this.#queue.length >= this.config.queueSize) {
      this.metrics.poolRejections.inc({ upstream: this.name, reason: 'queue_full' });
      return failedCall(this.#overloaded('queue is full'));
    }
    const queued = new DeferredCall(method, params, options, (q) => this.#unqueue(q));
    queued.timer = setTimeout(() => {
      const anyReady = this.#workers.some((w) => w.ready);
      this.metrics.poolRejections.inc({ upstream: this.name, reason: anyReady ? 'queue_timeout' : 'unavailable' });
      this.#unqueue(queued);
      queued.fail(
        anyReady
          ? this.#overloaded(`no worker free within ${this.config.queueTimeoutMs} ms`)
          : new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.name} has no running worker${this.#lastError ? ` (${this.#lastError})` : ''}`, {
              retryAfterMs: this.#backoff.peekMs(),
            }),
      );
    }, this.config.queueTimeoutMs);
    this.#queue.push(queued);
    this.metrics.poolQueueDepth.set({ upstream: this.name }, this.#queue.length);
    this.#maybeGrow();
    return queued;
  }

  #unqueue(queued: DeferredCall): void {
    const i = this.#queue.indexOf(queued);
    if (i !== -1) this.#queue.splice(i, 1);
    this.metrics.poolQueueDepth.set({ upstream: this.name }, this.#queue.length);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#reaper);
    clearTimeout(this.#restartTimer);
    for (const q of this.#queue.splice(0)) q.fail(new GatewayError('SHUTTING_DOWN'));
    this.metrics.poolQueueDepth.set({ upstream: this.name }, 0);
    const workers = this.#workers.splice(0);
    await Promise.all(workers.map((w) => w.upstream.close()));
    this.metrics.upstreamWorkers.set({ upstream: this.name }, 0);
  }

  #overloaded(why: string): GatewayError {
    return new GatewayError('OVERLOADED', `Upstream ${this.name} is overloaded: ${why}`, {
      retryAfterMs: Math.min(this.config.queueTimeoutMs, 1000),
    });
  }

  #pick(): Worker | undefined {
    let best: Worker | undefined;
    let bestLoad = this.config.maxInFlight;
    for (const w of this.#workers) {
      if (!w.ready) continue;
      const load = w.upstream.inFlight;
      if (load < bestLoad) {
        best = w;
        bestLoad = load;
        if (load === 0) break;
      }
    }
    return best;
  }

  #dispatch(worker: Worker, method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    const call = worker.upstream.call(method, params, options);
    // Every slot in use: start another worker now, before the queue has to absorb the burst.
    if (worker.upstream.inFlight >= this.config.maxInFlight) this.#maybeGrow();
    return call;
  }

  #drain(): void {
    while (this.#queue.length > 0) {
      const worker = this.#pick();
      if (!worker) return;
      const queued = this.#queue.shift()!;
      queued.dispatch(this.#dispatch(worker, queued.method, queued.params, queued.options));
    }
    this.metrics.poolQueueDepth.set({ upstream: this.name }, this.#queue.length);
  }

  #maybeGrow(): void {
    if (this.#closed || this.#restartTimer) return;
    if (this.#workers.length + this.#starting >= this.config.max) return;
    const busy = this.#workers.every((w) => !w.ready || w.upstream.inFlight >= this.config.maxInFlight);
    if (busy && this.#starting === 0) this.#spawn().catch(() => this.#scheduleRestart());
  }

  async #spawn(): Promise<Worker> {
    this.#starting++;
    const upstream = this.createWorker(this.#spawned++);
    const worker: Worker = { upstream, ready: false, startedAt: Date.now(), idleSince: Date.now() };
    this.#workers.push(worker);
    upstream.onCallSettled(() => {
      if (upstream.inFlight === 0) worker.idleSince = Date.now();
      if (this.#queue.length > 0) this.#drain();
    });
    upstream.onExit((reason) => this.#onWorkerExit(worker, reason));
    try {
      const info = await upstream.start();
      worker.ready = true;
      this.#lastError = undefined;
      const unlogged = this.throttle.reset('start');
      if (unlogged > 0) this.log.info({ upstream: this.name, failedStartsNotLogged: unlogged }, 'upstream worker started after failed starts');
      const first = this.#info === undefined;
      this.#info = info;
      if (first) for (const l of this.#infoListeners) l(info);
      this.metrics.upstreamWorkers.set({ upstream: this.name }, this.#workers.filter((w) => w.ready).length);
      this.#drain();
      return worker;
    } catch (err) {
      this.#lastError = err instanceof Error ? err.message : String(err);
      this.#remove(worker);
      this.metrics.upstreamStartFailures.inc({ upstream: this.name });
      const suppressed = this.throttle.take('start');
      if (suppressed !== undefined) {
        this.log.error({ upstream: upstream.label, err: this.#lastError, ...suppressedField(suppressed) }, 'upstream worker failed to start');
      }
      throw err;
    } finally {
      this.#starting--;
    }
  }

  #remove(worker: Worker): void {
    const i = this.#workers.indexOf(worker);
    if (i !== -1) this.#workers.splice(i, 1);
    this.metrics.upstreamWorkers.set({ upstream: this.name }, this.#workers.filter((w) => w.ready).length);
  }

  #onWorkerExit(worker: Worker, reason: string): void {
    const wasReady = worker.ready;
    worker.ready = false;
    this.#remove(worker);
    if (this.#closed || !wasReady) return;
    this.#lastError = reason;
    this.metrics.upstreamRestarts.inc({ upstream: this.name });
    // A worker that ran a good while earns a fresh backoff; one that dies young waits longer.
    if (Date.now() - worker.startedAt > 30_000) this.#backoff.reset();
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    if (this.#closed || this.#restartTimer) return;
    const needed = Math.max(this.config.min, this.#queue.length > 0 ? 1 : 0, this.#info === undefined ? 1 : 0);
    if (this.#workers.length + this.#starting >= needed) return;
    const delay = this.#backoff.next();
    // Said already: by the failed start, or by the worker's exit (each throttled).
    this.log.debug({ upstream: this.name, delayMs: delay }, 'restarting upstream worker');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      this.#spawn().then(
        () => {
          this.#scheduleRestart();
        },
        () => this.#scheduleRestart(),
      );
    }, delay);
    this.#restartTimer.unref();
  }

  #reapIdle(): void {
    const now = Date.now();
    for (const w of [...this.#workers]) {
      if (this.#workers.length <= this.config.min) return;
      if (w.ready && w.upstream.inFlight === 0 && now - w.idleSince > this.config.idleTimeoutMs) {
        this.#remove(w);
        this.log.info({ upstream: w.upstream.label }, 'stopping idle upstream worker');
        void w.upstream.close();
      }
    }
  }
}
