import type { Logger } from 'pino';
import type { PoolConfig } from '../config/schema.js';
import { suppressedField, type LogThrottle } from '../observability/log-throttle.js';
import type { DataPathEvents } from '../observability/events.js';
import type { CircuitState } from './connection/circuit-breaker.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamConnection,
  UpstreamCall,
  UpstreamServerInfo,
} from '../contracts/upstream.js';

export type PoolState = 'starting' | 'ready' | 'down' | 'closed';

/** One upstream's workers as /readyz and /status show them. */
export interface PoolStatus {
  state: PoolState;
  workers: number;
  ready: number;
  inFlight: number;
  queued: number;
  /** Per-session upstreams: requests their workers made of clients, not answered yet. */
  clientRequests?: number;
  lastError?: string;
  /** When lastError happened (ISO 8601). */
  lastErrorAt?: string;
  /** A remote upstream's circuit breaker (see circuit-breaker.ts); absent for stdio. */
  circuit?: CircuitState;
  consecutiveFailures?: number;
  retryAfterMs?: number;
  lastFailure?: string;
  lastFailureAt?: string;
  /**
   * The era the gateway speaks to it, in /readyz's words: `modern` (2026-07-28, stateless), `session` (2025,
   * initialize) or `dual` (both: stateless clients' calls go the stateless way, 2025 sessions keep one upstream).
   */
  era?: 'modern' | 'session' | 'dual';
  /** The revision it speaks (what initialize or server/discover said). */
  protocolVersion?: string;
  /** A dual-era upstream: the 2025 revision its initialize answered. */
  sessionProtocolVersion?: string;
}

/** Something to send calls to, one at a time: a worker, or a whole set. */
export type UpstreamCaller = Pick<UpstreamConnection, 'call'>;

/**
 * The workers of one configured upstream, whatever its `mode`: a shared pool (UpstreamPool) or
 * a worker per client scope (SessionWorkers). The gateway asks a set what it needs and never
 * which kind it is; the one thing that differs for it is `perScope` (where a scope's calls must
 * run, and who an upstream's notification is for).
 */
export interface WorkerSet {
  readonly name: string;
  /**
   * true: every scope (client session) gets a worker of its own, which runs on one replica and
   * whose notifications are that scope's; false: one pool serves every scope, on every replica.
   */
  readonly perScope: boolean;
  /** What the upstream said at initialize, once a worker (or probe) has started. */
  readonly info: UpstreamServerInfo | undefined;
  /** Fires once, when a worker of the set first learns `info` by itself (not through probe(), whose caller has it). */
  onInfo(listener: (info: UpstreamServerInfo) => void): void;
  status(): PoolStatus;
  /**
   * Brings the upstream up far enough to list what it offers, and lends `use` something to call:
   * the started pool itself, or a probe worker initialized as `identity` and stopped after.
   */
  probe<T>(identity: ClientIdentity, use: (caller: UpstreamCaller) => Promise<T>): Promise<T>;
  /**
   * One call for `scope`. A shared pool takes any free worker and needs neither scope nor
   * identity; a per-scope set starts the scope's worker on first use, initialized as `identity()`.
   */
  call(
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
    scope: string,
    identity: () => ClientIdentity,
  ): UpstreamCall;
  /** The scope's own worker on this replica, if it has one (a shared pool's workers are nobody's). */
  workerOf(scope: string): UpstreamConnection | undefined;
  /** How many scopes have a worker of their own on this replica. */
  readonly scopes: number;
  /** Stops the scope's own worker, if any: its session ended. */
  release(scope: string, reason?: string): Promise<void>;
  /**
   * A per-scope set: the scope's call waits for its client's retry after input_required (it may then make room at the
   * cap).
   */
  setYielded?(scope: string, yielded: boolean): void;
  /** Stops every worker; calls after it fail with SHUTTING_DOWN. Idempotent. */
  close(): Promise<void>;
  /**
   * Whether the upstream speaks 2026-07-28: its calls then carry a request's full `_meta`
   * (the client's capabilities and identity) instead of a session. Absent: it does not.
   */
  readonly speaksStateless?: boolean;
  /** A 2026-07-28 upstream that speaks a 2025 revision too: 2025 clients keep their session path to it. */
  readonly dualEra?: boolean;
  /** The caching hints (ttlMs, cacheScope) of its last answer to a list method, when it gives them. */
  hints?(method: string): { ttlMs?: number; cacheScope?: 'public' | 'private' } | undefined;
}

/** A worker as the shared half sees it: the connection, and whether it answered initialize. */
export interface Member {
  upstream: UpstreamConnection;
  ready: boolean;
}

export interface WorkerSetOptions {
  /** How its logs name one worker ("upstream worker", "per-session worker"). */
  workerNoun: string;
  /** How loud a failed start is: a shared pool down is an error, one session's worker a warning. */
  startFailureLevel: 'error' | 'warn';
}

/**
 * What both kinds of set share: the upstream's info and its listeners, the last start error,
 * the idle reaper (every half idleTimeoutMs, at least every second), status building, and the
 * throttled "failed to start" and "started after failed starts" lines. A subclass says what
 * its workers are, how many calls wait, when it counts as up, and what idle means for it.
 */
export abstract class WorkerSetBase {
  /** Workers created so far: each gets the next index (its label's `#n`). */
  protected spawned = 0;
  #lastError: { message: string; at: number } | undefined;
  #info: UpstreamServerInfo | undefined;
  #closed = false;
  readonly #infoListeners: Array<(info: UpstreamServerInfo) => void> = [];
  readonly #reaper: NodeJS.Timeout;

  protected constructor(
    readonly name: string,
    protected readonly config: PoolConfig,
    protected readonly log: Logger,
    protected readonly diagnostics: DataPathEvents,
    /** Repeated start failures are logged at this pace: a broken upstream is retried often. */
    protected readonly throttle: LogThrottle,
    private readonly options: WorkerSetOptions,
  ) {
    this.#reaper = setInterval(() => this.reapIdle(), Math.max(1000, Math.floor(config.idleTimeoutMs / 2)));
    this.#reaper.unref();
  }

  /** The last start error, cleared by a start that succeeds. */
  protected get lastError(): string | undefined {
    return this.#lastError?.message;
  }

  /** Stamped with its time, which status() reports. */
  protected set lastError(message: string | undefined) {
    this.#lastError = message === undefined ? undefined : { message, at: Date.now() };
  }

  get info(): UpstreamServerInfo | undefined {
    return this.#info;
  }

  get closed(): boolean {
    return this.#closed;
  }

  onInfo(listener: (info: UpstreamServerInfo) => void): void {
    this.#infoListeners.push(listener);
  }

  status(): PoolStatus {
    let workers = 0;
    let ready = 0;
    let inFlight = 0;
    for (const w of this.members()) {
      workers++;
      if (!w.ready) continue;
      ready++;
      // Only ready workers carry calls: a starting one's initialize is not a call in flight.
      inFlight += w.upstream.inFlight;
    }
    let state: PoolState;
    if (this.#closed) state = 'closed';
    else if (this.isUp(ready)) state = 'ready';
    else if (this.#info === undefined && this.lastError === undefined) state = 'starting';
    else state = 'down';
    const clientRequests = this.clientRequests();
    return {
      state,
      workers,
      ready,
      inFlight,
      queued: this.queued(),
      ...(clientRequests !== undefined ? { clientRequests } : {}),
      ...(this.#lastError?.message
        ? { lastError: this.#lastError.message, lastErrorAt: new Date(this.#lastError.at).toISOString() }
        : {}),
    };
  }

  /** Keeps what a worker said at initialize; `announce`: tell the listeners, the first time. */
  protected learn(info: UpstreamServerInfo, announce: boolean): void {
    const first = this.#info === undefined;
    this.#info = info;
    if (first && announce) for (const l of this.#infoListeners) l(info);
  }

  /** Refuses new calls from now on and stops the reaper; the subclass stops its workers. */
  protected markClosed(): void {
    this.#closed = true;
    clearInterval(this.#reaper);
  }

  /** A worker started: says so if starts had failed (and been throttled) before it. */
  protected noteStarted(): void {
    const unlogged = this.throttle.reset('start');
    if (unlogged > 0)
      this.log.info(
        { upstream: this.name, failedStartsNotLogged: unlogged },
        `${this.options.workerNoun} started after failed starts`,
      );
  }

  /** A worker failed to start: counted, and logged at the throttle's pace. */
  protected noteStartFailed(label: string, reason: string): void {
    this.diagnostics.emit('upstream:start-failure', { upstream: this.name });
    const suppressed = this.throttle.take('start');
    if (suppressed === undefined) return;
    this.log[this.options.startFailureLevel](
      { upstream: label, err: reason, ...suppressedField(suppressed) },
      `${this.options.workerNoun} failed to start`,
    );
  }

  /** Every worker the set holds now, started or starting. */
  protected abstract members(): Iterable<Member>;
  /** Calls waiting for a worker. */
  protected abstract queued(): number;
  /** Whether the set serves calls now, given how many of its workers are ready. */
  protected abstract isUp(ready: number): boolean;
  /** Stops the workers idle for longer than pool.idleTimeoutMs (as far as the set may). */
  protected abstract reapIdle(): void;

  /** Requests its workers made of clients, still open; undefined where none can (a shared pool). */
  protected clientRequests(): number | undefined {
    return undefined;
  }
}

/**
 * The identity a set without a worker per scope is handed: it never asks (its workers introduce themselves as the
 * gateway).
 */
export const NO_IDENTITY = (): ClientIdentity => {
  throw new Error('a shared worker set asked for a client identity');
};
