import type { Logger } from 'pino';
import type { PoolConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { LogThrottle } from '../observability/log-throttle.js';
import type { DataPathEvents } from '../observability/events.js';
import { WorkerAsks } from './connection/worker-asks.js';
import { Spares } from './spares.js';
import { WorkerSetBase, type Member, type UpstreamCaller, type WorkerSet } from './worker-set.js';
import { DeferredCall, failedCall } from '../contracts/deferred-call.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamConnection,
  UpstreamCall,
  UpstreamPeer,
  UpstreamSessionMemory,
} from '../contracts/upstream.js';

export type WorkerFactory = (
  identity: ClientIdentity,
  index: number,
  peer: UpstreamPeer,
  memory?: UpstreamSessionMemory,
) => UpstreamConnection;

/** Why a worker opened for a user may not start that says nothing of the upstream. */
const USER_ERRORS: ReadonlySet<string> = new Set([
  'URL_ELICITATION_REQUIRED',
  'UPSTREAM_IDENTITY_REFUSED',
  'CLAIM_HEADER_INVALID',
]);

interface Dedicated extends Member {
  waiting: DeferredCall[];
  /** What its upstream asked the client and still waits for. */
  asks: WorkerAsks;
  lastUsed: number;
  /** release() stopped it: a start it cuts short is no failure of the upstream. */
  released: boolean;
  /** Opened for its client's user (an upstream that acts for users: it goes as them). */
  forUser: boolean;
  /** Its call waits for its client to come back (see setYielded). */
  yielded: boolean;
}

/**
 * `mode: per-session`: every client scope (session) gets its own worker, initialized with that
 * client's own capabilities and clientInfo, so the upstream can ask that client for sampling,
 * elicitation or roots. Started on first use (concurrent first calls share one start), stopped
 * when the scope is released or idle, at most `pool.max` at once.
 */
export class SessionWorkers extends WorkerSetBase implements WorkerSet {
  readonly perScope = true;
  readonly #workers = new Map<string, Dedicated>();
  /** Scopes whose worker this replica is stopping (its upstream session is being ended). */
  readonly #stopping = new Map<string, Promise<void>>();
  readonly #probes = new Set<UpstreamConnection>(); // running (a catalog refresh's too): close() stops them as well
  /** Requests to clients still open, of every worker this upstream started (stopped ones too, until they end). */
  readonly #asks = { open: 0 };
  readonly #spares: Spares;

  constructor(
    name: string,
    config: PoolConfig,
    private readonly createWorker: WorkerFactory,
    /** The peer for a scope's worker: where its requests to the client go. */
    private readonly peerFor: (scope: string) => UpstreamPeer,
    log: Logger,
    diagnostics: DataPathEvents,
    /** Where a scope's upstream session is remembered across replicas (remote upstreams). */
    private readonly memoryFor?: (scope: string) => UpstreamSessionMemory,
    /** Starts that fail are logged at this pace: every new session of a broken upstream tries again. */
    throttle: LogThrottle = new LogThrottle(),
  ) {
    super(name, config, log, diagnostics, throttle, { workerNoun: 'per-session worker', startFailureLevel: 'warn' });
    this.#spares = new Spares({
      wanted: () => this.config.spares,
      closed: () => this.closed,
      create: (identity, peer) => this.createWorker(identity, this.spawned++, peer),
      startFailed: (label, reason) => this.noteStartFailed(label, reason),
    });
  }

  get scopes(): number {
    return this.#workers.size;
  }

  /** The same as `scopes` (the gateway's name for it until it asks any WorkerSet). */
  get size(): number {
    return this.#workers.size;
  }

  protected members(): Iterable<Member> {
    return this.#workers.values();
  }

  protected queued(): number {
    let n = 0;
    for (const w of this.#workers.values()) n += w.waiting.length;
    return n;
  }

  /** Workers start on demand: the upstream serves once it is known (a probe or a worker answered). */
  protected isUp(): boolean {
    return this.info !== undefined;
  }

  protected override clientRequests(): number {
    return this.#asks.open;
  }

  /** Pid-like label of a scope's worker, for logs and tests; undefined when it has none. */
  workerOf(scope: string): UpstreamConnection | undefined {
    return this.#workers.get(scope)?.upstream;
  }

  /**
   * Learns the upstream's capabilities and lists from a probe worker initialized as the gateway
   * itself (offering every client capability, so no tool is hidden), then stops it.
   */
  async probe<T>(identity: ClientIdentity, use: (probe: UpstreamCaller) => Promise<T>): Promise<T> {
    const refuse: UpstreamPeer = {
      request: async (method) => {
        // It declares roots (so no tool stays hidden): it has none to give, and says so.
        if (method === 'roots/list') return { roots: [] };
        throw new GatewayError('METHOD_NOT_FOUND', `${method} is not available while the gateway probes an upstream`);
      },
      notification: () => undefined,
    };
    if (this.closed) throw new GatewayError('SHUTTING_DOWN');
    const probe = this.createWorker(identity, this.spawned++, refuse);
    this.#probes.add(probe);
    try {
      try {
        // Not announced: whoever probes has the info in hand.
        this.learn(await probe.start(), false);
      } catch (err) {
        // An upstream that lists only per user: the catalog comes from the first user's worker.
        const user = [...this.#workers.values()].find((w) => w.ready && w.forUser);
        if (user) return await use(user.upstream);
        // The caller logs it (once at start-up, or as a failed catalog refresh); counted here.
        this.diagnostics.emit('upstream:start-failure', { upstream: this.name });
        throw err;
      }
      this.lastError = undefined;
      this.#spares.refill();
      return await use(probe);
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      throw err;
    } finally {
      await probe.close().finally(() => this.#probes.delete(probe));
    }
  }

  /** The scope's call, on its own worker (started now if it has none). */
  call(
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
    scope: string,
    identity: () => ClientIdentity,
  ): UpstreamCall {
    if (this.closed) return failedCall(new GatewayError('SHUTTING_DOWN'));
    let worker = this.#workers.get(scope);
    if (!worker) {
      // At the cap, the least recently used idle worker makes room: clients that vanish
      // without DELETE must not lock everyone else out until their idle timeout.
      if (this.#workers.size >= this.config.max) this.#evictIdle();
      if (this.#workers.size >= this.config.max) {
        this.diagnostics.emit('pool:rejection', { upstream: this.name, reason: 'max_sessions' });
        return failedCall(
          new GatewayError(
            'OVERLOADED',
            `Upstream ${this.name} already runs its maximum of ${this.config.max} per-session workers`,
            {
              retryAfterMs: 1000,
            },
          ),
        );
      }
      worker = this.#start(scope, identity());
    }
    worker.lastUsed = Date.now();
    if (worker.ready) {
      if (worker.upstream.inFlight < this.config.maxInFlight) return this.#send(worker, method, params, options);
      this.diagnostics.emit('pool:rejection', { upstream: this.name, reason: 'queue_full' });
      return failedCall(
        new GatewayError(
          'OVERLOADED',
          `This session already has ${this.config.maxInFlight} calls in flight on ${this.name}`,
          { retryAfterMs: 1000 },
        ),
      );
    }
    const deferred = new DeferredCall(method, params, options, (d) => {
      const i = worker.waiting.indexOf(d);
      if (i !== -1) worker.waiting.splice(i, 1);
    });
    worker.waiting.push(deferred);
    return deferred;
  }

  /**
   * A stateless request's worker answered input_required and waits for the client's retry
   * (`yielded`), or the retry came. While it waits, its call is in flight but no client request
   * is: at the cap it may make room like an idle worker (after those), and the retry then gets
   * the call's end (REQUEST_CANCELLED). A client that never retries holds no worker from others.
   */
  setYielded(scope: string, yielded: boolean): void {
    const worker = this.#workers.get(scope);
    if (!worker) return;
    worker.yielded = yielded;
    worker.lastUsed = Date.now();
  }

  /**
   * Stops the scope's worker (its session ended, or it was idle). Whatever it still held ends at
   * once: calls waiting for its start, its requests to the client, and (as it closes) its calls
   * in flight. The scope's next call starts a new worker at once; it does not continue the
   * upstream session this one is ending.
   */
  release(scope: string, reason = 'Session ended'): Promise<void> {
    const worker = this.#workers.get(scope);
    if (!worker) return Promise.resolve();
    this.#workers.delete(scope);
    worker.released = true;
    this.#updateGauge();
    this.#retire(worker, new GatewayError('REQUEST_CANCELLED', reason));
    this.log.info({ upstream: worker.upstream.label, scope }, 'stopping per-session worker');
    const closed = worker.upstream.close();
    this.#stopping.set(scope, closed);
    const stopped = () => {
      if (this.#stopping.get(scope) === closed) this.#stopping.delete(scope);
    };
    closed.then(stopped, stopped);
    return closed;
  }

  async close(): Promise<void> {
    this.markClosed();
    await this.#spares.close();
    for (const scope of [...this.#workers.keys()]) void this.release(scope);
    // And those already stopping, and the probes: a process still in its stop's grace would outlive the gateway.
    await Promise.all([...this.#stopping.values(), ...[...this.#probes].map((probe) => probe.close())]);
  }

  /**
   * A running spare for `scope`, bound to its client, or a new worker; its requests to the client counted in `asks`.
   */
  #createFor(scope: string, identity: ClientIdentity, asks: WorkerAsks): UpstreamConnection {
    // Each new scope tops the spares up (a dead spare is replaced here, not when it dies).
    setImmediate(() => this.#spares.refill());
    const peer = asks.track(this.peerFor(scope));
    return (
      this.#spares.take(identity, peer) ?? this.createWorker(identity, this.spawned++, peer, this.#memoryFor(scope))
    );
  }

  /**
   * While this replica is still ending the scope's previous upstream session (its DELETE and
   * the record of it in the store), the new worker must not continue that session: it would
   * send calls into a session about to vanish, and the old worker's "forget" could land after
   * the new worker recorded its own session. So it starts a new one, and records it after.
   */
  #memoryFor(scope: string): UpstreamSessionMemory | undefined {
    const memory = this.memoryFor?.(scope);
    const stopping = this.#stopping.get(scope);
    if (!memory || !stopping) return memory;
    return {
      recall: async () => undefined,
      remember: (state) =>
        stopping.then(
          () => memory.remember(state),
          () => memory.remember(state),
        ),
    };
  }

  #start(scope: string, identity: ClientIdentity): Dedicated {
    const asks = new WorkerAsks(this.#asks);
    const upstream = this.#createFor(scope, identity, asks);
    const worker: Dedicated = {
      upstream,
      ready: false,
      waiting: [],
      asks,
      lastUsed: Date.now(),
      released: false,
      forUser: identity.forUser === true && identity.caller !== undefined,
      yielded: false,
    };
    this.#workers.set(scope, worker);
    this.#updateGauge();
    // Idle time counts from the end of its last call, not its start: a long call is use too.
    upstream.onCallSettled(() => {
      worker.lastUsed = Date.now();
    });
    upstream.onExit((reason) => {
      // The next call of this scope starts a new worker: a new upstream session, logged.
      if (this.#workers.get(scope) === worker) this.#workers.delete(scope);
      this.#updateGauge();
      // One that dies while it starts is a failed start (counted when its start rejects).
      if (worker.ready) this.diagnostics.emit('upstream:restart', { upstream: this.name });
      this.#retire(worker, new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${upstream.label} ${reason}`));
    });
    upstream.start().then(
      (info) => {
        if (this.info === undefined) this.learn(info, true);
        worker.ready = true;
        this.noteStarted();
        for (const d of worker.waiting.splice(0)) {
          if (d.waiting) d.dispatch(this.#send(worker, d.method, d.params, d.options));
        }
      },
      (err: unknown) => {
        // Its user's refusal (no authorization yet, a refused exchange, a bad claim) is theirs, not the upstream's.
        const users = err instanceof GatewayError && USER_ERRORS.has(err.type);
        if (!users) this.lastError = err instanceof Error ? err.message : String(err);
        if (!worker.released && !users) this.noteStartFailed(upstream.label, this.lastError!);
        if (this.#workers.get(scope) === worker) this.#workers.delete(scope);
        this.#updateGauge();
        // An open circuit says so itself (with its own retry hint); anything else is "unavailable".
        const error =
          err instanceof GatewayError && (err.type === 'UPSTREAM_CIRCUIT_OPEN' || users)
            ? err
            : new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.name} failed to start: ${this.lastError}`, {
                retryAfterMs: 1000,
              });
        this.#retire(worker, error);
      },
    );
    return worker;
  }

  /** Everything a worker that goes still holds, other than its calls in flight (its close fails those), ends now. */
  #retire(worker: Dedicated, error: GatewayError): void {
    for (const d of worker.waiting.splice(0)) d.fail(error);
    worker.asks.failAll(error);
  }

  /** The call goes to the worker's upstream; what the upstream asks its client meanwhile may be for it. */
  #send(
    worker: Dedicated,
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
  ): UpstreamCall {
    const call = worker.upstream.call(method, params, options);
    worker.asks.during(call);
    return call;
  }

  /**
   * Idle: started, no call in flight or waiting. Only such a worker may be reaped; a busy one is
   * never taken from its client. A request to its client does not keep it busy by itself: one
   * made for a call is withdrawn when that call ends (WorkerAsks), one made for none waits for
   * nothing the client asked.
   */
  #idle(w: Dedicated): boolean {
    return w.ready && w.upstream.inFlight === 0 && w.waiting.length === 0;
  }

  /**
   * At the cap: the least recently used idle worker makes room, else one whose client went away after input_required.
   */
  #evictIdle(): void {
    let victim: string | undefined;
    let best = { rank: 2, lastUsed: Infinity };
    for (const [scope, w] of this.#workers) {
      const rank = this.#idle(w) ? 0 : w.yielded && w.ready && w.waiting.length === 0 ? 1 : 2;
      if (rank < best.rank || (rank === best.rank && rank < 2 && w.lastUsed < best.lastUsed)) {
        victim = scope;
        best = { rank, lastUsed: w.lastUsed };
      }
    }
    if (victim === undefined) return;
    this.log.info(
      { upstream: this.name, scope: victim, waitingForRetry: best.rank === 1 },
      'evicting the least recently used idle per-session worker',
    );
    const error = new GatewayError('REQUEST_CANCELLED', 'Evicted to make room for another session');
    // A yielded worker's call ends with why, which its client's retry then hears (not "shutting down").
    for (const call of this.#workers.get(victim)!.asks.calls()) call.cancel(error);
    void this.release(victim, error.message);
  }

  #updateGauge(): void {
    this.diagnostics.emit('upstream:workers', { upstream: this.name, count: this.#workers.size });
  }

  protected reapIdle(): void {
    const cutoff = Date.now() - this.config.idleTimeoutMs;
    for (const [scope, w] of this.#workers) {
      if (this.#idle(w) && w.lastUsed < cutoff) void this.release(scope, 'Idle for longer than pool.idleTimeoutMs');
    }
  }
}
