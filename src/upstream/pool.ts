import type { Logger } from 'pino';
import type { PoolConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { LogThrottle } from '../observability/log-throttle.js';
import type { DataPathEvents } from '../observability/events.js';
import { Backoff } from '../timing/backoff.js';
import { WorkerSetBase, type Member, type UpstreamCaller, type WorkerSet } from './worker-set.js';
import { DeferredCall, failedCall } from '../contracts/deferred-call.js';
import { FairQueue } from './fair-queue.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamConnection,
  UpstreamCall,
  UpstreamServerInfo,
} from '../contracts/upstream.js';

export type { PoolState, PoolStatus } from './worker-set.js';

interface Worker extends Member {
  startedAt: number;
  idleSince: number;
  /** When it last answered a call, or took one while it had none: what says it is stuck. */
  progressAt: number;
}

/**
 * N workers of one upstream: least-loaded selection (by what the unanswered requests weigh,
 * then by their count; a worker heavy with `heavyRequestBytes` of them last but for stalled ones,
 * and another starts), `maxInFlight` calls and `maxInFlightBytes` of requests per worker, a
 * bounded queue with a timeout that takes turns between clients, restarts with backoff. A full
 * queue fails fast with a retryable error: back-pressure, not buffering. A worker that has
 * answered nothing for `busyAfterMs` while calls wait on it is stalled: it gets calls only when
 * no other worker can take them (nor is about to start), and when every worker is full or
 * stalled another starts, up to `max`.
 */
export class UpstreamPool extends WorkerSetBase implements WorkerSet {
  readonly perScope = false;
  readonly scopes = 0;
  readonly #workers: Worker[] = [];
  readonly #queue = new FairQueue<DeferredCall>();
  #starting = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  /** Armed while calls are in flight, for the moment the first worker would become stalled. */
  #stallTimer: NodeJS.Timeout | undefined;
  readonly #backoff = new Backoff({ initialMs: 100, maxMs: 10_000 });

  constructor(
    name: string,
    config: PoolConfig,
    private readonly createWorker: (index: number) => UpstreamConnection,
    log: Logger,
    diagnostics: DataPathEvents,
    /** An upstream that cannot start is retried forever: its failures are logged at this pace. */
    throttle: LogThrottle = new LogThrottle(),
  ) {
    super(name, config, log, diagnostics, throttle, { workerNoun: 'upstream worker', startFailureLevel: 'error' });
  }

  protected members(): Iterable<Member> {
    return this.#workers;
  }

  protected queued(): number {
    return this.#queue.length;
  }

  /** Ready with a worker up, or with none needed (min 0) after the upstream last answered. */
  protected isUp(ready: number): boolean {
    return ready > 0 || (this.config.min === 0 && this.info !== undefined && !this.lastError);
  }

  /** The pool starts, and is what its user calls: identity does not matter, its workers are the gateway's own. */
  async probe<T>(_identity: ClientIdentity, use: (caller: UpstreamCaller) => Promise<T>): Promise<T> {
    await this.start();
    return use(this);
  }

  /** A shared worker belongs to no scope. */
  workerOf(): UpstreamConnection | undefined {
    return undefined;
  }

  release(): Promise<void> {
    return Promise.resolve();
  }

  /** Starts `min` workers (at least one, to learn the upstream's capabilities). */
  async start(): Promise<UpstreamServerInfo> {
    // Called again on every catalog refresh: a running pool must not grow by `min` each time.
    if (this.info && this.#workers.some((w) => w.ready)) return this.info;
    const first = Math.max(1, this.config.min);
    const results = await Promise.allSettled(Array.from({ length: first }, () => this.#spawn()));
    const ok = results.find((r) => r.status === 'fulfilled');
    if (!ok || !this.info) {
      const failure = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      this.#scheduleRestart();
      throw failure?.reason instanceof Error ? failure.reason : new Error(String(failure?.reason));
    }
    return this.info;
  }

  /** Any free worker takes it (the least busy); scope and identity do not matter here. */
  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    if (this.closed) return failedCall(new GatewayError('SHUTTING_DOWN'));
    const now = Date.now();
    const worker = this.#pick(now);
    if (worker) {
      // Only stalled workers left: another may start now (the stall timer saw this one still busy).
      if (this.#stalled(worker, now)) this.#maybeGrow(now);
      return this.#dispatch(worker, method, params, options);
    }

    if (this.#queue.length >= this.config.queueSize) {
      this.diagnostics.emit('pool:rejection', { upstream: this.name, reason: 'queue_full' });
      return failedCall(this.#overloaded('queue is full'));
    }
    const queued = new DeferredCall(method, params, options, (q) => this.#unqueue(q));
    queued.timer = setTimeout(() => {
      const anyReady = this.#workers.some((w) => w.ready);
      this.diagnostics.emit('pool:rejection', {
        upstream: this.name,
        reason: anyReady ? 'queue_timeout' : 'unavailable',
      });
      this.#unqueue(queued);
      queued.fail(
        anyReady
          ? this.#overloaded(`no worker free within ${this.config.queueTimeoutMs} ms`)
          : new GatewayError(
              'UPSTREAM_UNAVAILABLE',
              `Upstream ${this.name} has no running worker${this.lastError ? ` (${this.lastError})` : ''}`,
              {
                retryAfterMs: this.#backoff.peekMs(),
              },
            ),
      );
    }, this.config.queueTimeoutMs);
    this.#queue.push(clientOf(queued), queued);
    this.diagnostics.emit('pool:queue', { upstream: this.name, depth: this.#queue.length });
    this.#maybeGrow();
    return queued;
  }

  #unqueue(queued: DeferredCall): void {
    this.#queue.remove(clientOf(queued), queued);
    this.diagnostics.emit('pool:queue', { upstream: this.name, depth: this.#queue.length });
  }

  async close(): Promise<void> {
    this.markClosed();
    clearTimeout(this.#restartTimer);
    clearTimeout(this.#stallTimer);
    for (const q of this.#queue.clear()) q.fail(new GatewayError('SHUTTING_DOWN'));
    this.diagnostics.emit('pool:queue', { upstream: this.name, depth: 0 });
    const workers = this.#workers.splice(0);
    await Promise.all(workers.map((w) => w.upstream.close()));
    this.diagnostics.emit('upstream:workers', { upstream: this.name, count: 0 });
  }

  #overloaded(why: string): GatewayError {
    return new GatewayError('OVERLOADED', `Upstream ${this.name} is overloaded: ${why}`, {
      retryAfterMs: Math.min(this.config.queueTimeoutMs, 1000),
    });
  }

  /** Whether calls wait on `w` that it has not answered anything for `busyAfterMs`. */
  #stalled(w: Worker, now: number): boolean {
    return this.config.busyAfterMs > 0 && w.upstream.inFlight > 0 && now - w.progressAt >= this.config.busyAfterMs;
  }

  /**
   * Whether `w` takes no more calls now: every slot in use, or its requests weigh maxInFlightBytes (it has one at
   * least).
   */
  #full(w: Worker): boolean {
    const { maxInFlight, maxInFlightBytes } = this.config;
    const { inFlight, pendingBytes } = w.upstream;
    return inFlight >= maxInFlight || (maxInFlightBytes > 0 && inFlight > 0 && pendingBytes >= maxInFlightBytes);
  }

  /** Whether what waits on `w` weighs heavyRequestBytes: calls behind it wait for that much to be read. */
  #heavy(w: Worker): boolean {
    const { heavyRequestBytes } = this.config;
    return heavyRequestBytes > 0 && w.upstream.inFlight > 0 && w.upstream.pendingBytes >= heavyRequestBytes;
  }

  /** How long a call given to `w` would wait, as a rank: 0 light, 1 heavy, 2 stalled (answering nothing). */
  #rank(w: Worker, now: number): number {
    if (this.#stalled(w, now)) return 2;
    return this.#heavy(w) ? 1 : 0;
  }

  /**
   * The least loaded ready worker with room (the lightest requests waiting, then the fewest): a
   * light one first, then a heavy one, a stalled one only while none is starting.
   */
  #pick(now: number): Worker | undefined {
    let best: Worker | undefined;
    let bestRank = 3;
    for (const w of this.#workers) {
      if (!w.ready || this.#full(w)) continue;
      const rank = this.#rank(w, now);
      if (best === undefined || rank < bestRank || (rank === bestRank && lighter(w, best))) {
        best = w;
        bestRank = rank;
        if (w.upstream.inFlight === 0) break;
      }
    }
    // A worker about to start will answer sooner than one stuck behind a slow call.
    if (best && bestRank === 2 && this.#starting > 0) return undefined;
    return best;
  }

  #dispatch(
    worker: Worker,
    method: string,
    params: Record<string, unknown> | undefined,
    options?: CallOptions,
  ): UpstreamCall {
    if (worker.upstream.inFlight === 0) worker.progressAt = Date.now();
    const call = worker.upstream.call(method, params, options);
    // Every slot in use, or calls behind it would wait for a large one: start another worker now,
    // before the queue (or the worker's own pipe) has to absorb the burst.
    if (this.#full(worker) || this.#heavy(worker)) this.#maybeGrow();
    this.#watchStalls();
    return call;
  }

  /**
   * Arms the stall timer for the next moment a worker with calls in flight would become stalled. The timer reads
   * the clock once for both the growth and the next arming: with two reads, a timer that fired a millisecond early
   * (Node's timers run on the loop's cached clock) could see the worker not yet stalled, then the clock tick past
   * its moment, and arm nothing: the pool never grew for that stall (seen as CI flakes of pool-busy).
   */
  #watchStalls(now = Date.now()): void {
    if (this.#stallTimer || this.closed || this.config.busyAfterMs === 0) return;
    let next = Infinity;
    for (const w of this.#workers) {
      if (!w.ready || w.upstream.inFlight === 0) continue;
      const at = w.progressAt + this.config.busyAfterMs;
      if (at > now) next = Math.min(next, at);
    }
    if (next !== Infinity) this.#armStallTimer(next - now);
  }

  /** In `ms`: another worker if the pool is busy, and the timer armed again for the next stall. */
  #armStallTimer(ms: number): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      const at = Date.now();
      this.#maybeGrow(at);
      this.#watchStalls(at);
    }, ms);
    this.#stallTimer.unref();
  }

  #drain(): void {
    while (this.#queue.length > 0) {
      const worker = this.#pick(Date.now());
      if (!worker) return;
      const queued = this.#queue.shift()!;
      queued.dispatch(this.#dispatch(worker, queued.method, queued.params, queued.options));
    }
    this.diagnostics.emit('pool:queue', { upstream: this.name, depth: this.#queue.length });
  }

  #maybeGrow(now = Date.now()): void {
    if (this.closed || this.#restartTimer) return;
    if (this.#workers.length + this.#starting >= this.config.max) return;
    const busy = this.#workers.every((w) => !w.ready || this.#full(w) || this.#rank(w, now) > 0);
    if (busy && this.#starting === 0) this.#spawn().catch(() => this.#growthFailed());
  }

  /**
   * A worker started to grow the pool failed to start. The stall that asked for it may well last, with no call to
   * notice it (calls in flight on a stalled worker ask nothing more), so growth is tried again after the backoff.
   */
  #growthFailed(): void {
    this.#scheduleRestart();
    if (!this.closed && !this.#restartTimer) this.#armStallTimer(this.#backoff.next());
  }

  async #spawn(): Promise<Worker> {
    this.#starting++;
    const upstream = this.createWorker(this.spawned++);
    const now = Date.now();
    const worker: Worker = { upstream, ready: false, startedAt: now, idleSince: now, progressAt: now };
    this.#workers.push(worker);
    upstream.onCallSettled(() => {
      worker.progressAt = Date.now();
      if (upstream.inFlight === 0) worker.idleSince = worker.progressAt;
      else this.#watchStalls();
      if (this.#queue.length > 0) this.#drain();
    });
    upstream.onExit((reason) => this.#onWorkerExit(worker, reason));
    try {
      const info = await upstream.start();
      worker.ready = true;
      this.lastError = undefined;
      this.noteStarted();
      this.learn(info, true);
      this.diagnostics.emit('upstream:workers', {
        upstream: this.name,
        count: this.#workers.filter((w) => w.ready).length,
      });
      this.#drain();
      return worker;
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      this.#remove(worker);
      this.noteStartFailed(upstream.label, this.lastError);
      throw err;
    } finally {
      this.#starting--;
      // Calls that waited for this worker rather than a stalled one: a stalled one will do now.
      if (this.#queue.length > 0 && this.#starting === 0) this.#drain();
    }
  }

  #remove(worker: Worker): void {
    const i = this.#workers.indexOf(worker);
    if (i !== -1) this.#workers.splice(i, 1);
    this.diagnostics.emit('upstream:workers', {
      upstream: this.name,
      count: this.#workers.filter((w) => w.ready).length,
    });
  }

  #onWorkerExit(worker: Worker, reason: string): void {
    const wasReady = worker.ready;
    worker.ready = false;
    this.#remove(worker);
    if (this.closed || !wasReady) return;
    this.lastError = reason;
    this.diagnostics.emit('upstream:restart', { upstream: this.name });
    // A worker that ran a good while earns a fresh backoff; one that dies young waits longer.
    if (Date.now() - worker.startedAt > 30_000) this.#backoff.reset();
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    if (this.closed || this.#restartTimer) return;
    const needed = Math.max(this.config.min, this.#queue.length > 0 ? 1 : 0, this.info === undefined ? 1 : 0);
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

  protected reapIdle(): void {
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

/** Whose turn a queued call waits for: the client its options name (calls of none share one turn). */
function clientOf(call: DeferredCall): string {
  return call.options?.client ?? '';
}

/** Whether `a` has less waiting on it than `b`: lighter requests first, then fewer. */
function lighter(a: Worker, b: Worker): boolean {
  const [x, y] = [a.upstream, b.upstream];
  return x.pendingBytes !== y.pendingBytes ? x.pendingBytes < y.pendingBytes : x.inFlight < y.inFlight;
}
