// Routes calls on per-session workers to the replica that runs them, and what those workers
// send their client (requests, notifications) back to it.
import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcResponse } from '../jsonrpc/messages.js';
import type { Bus } from '../cluster/bus.js';
import type { OwnerRegistry } from '../cluster/owner-registry.js';
import { failedCall } from '../contracts/deferred-call.js';
import type { WorkerSet } from '../upstream/worker-set.js';
import type {
  CallOptions,
  ClientIdentity,
  McpResult,
  PerSessionCallOptions,
  UpstreamCall,
  UpstreamPeer,
} from '../contracts/upstream.js';
import { LATEST_VERSION, isStatelessEra } from '../jsonrpc/versions.js';
import { ClientAsks } from './client-asks.js';
import type { RequestContext } from '../contracts/request-context.js';
import {
  CLIENT_CAPABILITY,
  InputChains,
  chainScopeOf,
  isChainScope,
  newChainScope,
} from '../stateless/input-chains.js';
import { OwnerUnreachable, RemoteCalls, type LocalExecutor } from '../cluster/remote-calls.js';
import { WorkerStarts } from './worker-starts.js';
import type { NotificationEvents } from './request-events.js';
import type { Guardrails } from '../guardrails/chains.js';

/** The requests of one client scope in flight on this replica's per-session workers. */
interface ScopeLink {
  active: RequestContext[];
  last: RequestContext;
}

export interface PerSessionUpstream {
  workers: WorkerSet;
  /** Hard ceiling of one call, and how long the client may take to answer a request. */
  maxTimeoutMs: number;
}

export interface PerSessionRouterOptions {
  upstreams: Map<string, PerSessionUpstream>;
  owners: OwnerRegistry;
  bus: Bus;
  log: Logger;
  /** A scope's worker of `upstream` said its list changed (the catalog must refresh). */
  onListChanged: (upstream: string, method: string, scope: string) => void;
  /** A worker's notification as its client knows it (resource URIs prefixed: resources.uris). */
  exposeNotification?: (upstream: string, n: JsonRpcNotification) => JsonRpcNotification;
  /** Where the notifications passed on to clients are published (tracing). */
  notifications?: NotificationEvents;
  /** After an input-required result, how long a stateless request's call waits for the retry. */
  inputWaitMs: number;
  /** limits.workerStartsPerMinute (0: no limit). */
  workerStartsPerMinute?: number;
  /** What checks a worker's asks (sampling, elicitation) on their way to the client and the answers back. */
  guardrails?: Guardrails | undefined;
}

/**
 * Calls on per-session workers: the worker of a scope runs on exactly one replica (its owner);
 * other replicas forward to it. Requests and notifications from a worker reach the client on
 * the reply stream of a call in flight, else on the client's own session stream.
 */
export class PerSessionRouter implements LocalExecutor {
  readonly #links = new Map<string, ScopeLink>();
  readonly #clientAsks: ClientAsks;
  readonly #remote: RemoteCalls;
  readonly #chains: InputChains;
  readonly #starts: WorkerStarts;

  constructor(private readonly options: PerSessionRouterOptions) {
    this.#clientAsks = new ClientAsks(options.bus.replicaId);
    this.#starts = new WorkerStarts(options.workerStartsPerMinute ?? 0);
    this.#remote = new RemoteCalls(options.bus, options.owners, this, options.log);
    this.#chains = new InputChains(
      {
        // The client has the whole wait to answer, and then some (its retry has to arrive).
        ask: (scope, deliver, method, params, signal) =>
          this.#clientAsks.send(scope, deliver, method, params, options.inputWaitMs * 2, signal),
        answer: (scope, response) => this.#clientAsks.receive(scope, response),
        release: (scope) => this.release(scope),
        yielded: (scope, yielded) => {
          for (const entry of options.upstreams.values()) entry.workers.setYielded?.(scope, yielded);
        },
      },
      options.inputWaitMs,
    );
  }

  /** Stateless requests whose per-session call is running or waiting for input, on this replica. */
  get chains(): number {
    return this.#chains.size;
  }

  start(): Promise<void> {
    return this.#remote.start();
  }

  async close(): Promise<void> {
    this.#chains.closeAll(new GatewayError('SHUTTING_DOWN'));
    await this.#remote.close();
    await Promise.all([...this.options.upstreams.values()].map((u) => u.workers.close()));
  }

  /**
   * Runs a call on the scope's worker, wherever it lives. `onCall` learns each underlying call
   * (for cancellation and timeouts) as soon as it exists.
   */
  async call(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options: PerSessionCallOptions | undefined,
    onCall: (call: UpstreamCall) => void,
  ): Promise<McpResult> {
    const { owners } = this.options;
    if (ctx.stateless) {
      // No session: the request (and its retries, through requestState) gets a worker of its own.
      const scope = options?.continuation === true ? chainScopeOf(params?.requestState) : newChainScope();
      if (scope === undefined)
        throw new GatewayError(
          'INVALID_PARAMS',
          'requestState is not valid: altered, from an earlier round, for another request, or expired',
        );
      ctx = { ...ctx, scope };
    }
    let owner = await owners.claim(ctx.scope, upstream);
    if (owner !== owners.replicaId) {
      try {
        const remote = this.#remote.call(owner, ctx, upstream, method, params, options);
        onCall(remote);
        return await remote.promise;
      } catch (err) {
        if (!(err instanceof OwnerUnreachable)) throw err;
        // The owner never acknowledged: the call did not start there, so it can run here.
        owner = await owners.takeOver(ctx.scope, upstream, err.owner);
        if (owner !== owners.replicaId)
          throw new GatewayError('UPSTREAM_UNAVAILABLE', "The replica running this session's worker did not answer", {
            retryAfterMs: 1000,
          });
      }
    }
    const local = this.runLocal(ctx, upstream, method, params, options);
    onCall(local);
    return local.promise;
  }

  /**
   * Runs on this replica's own worker for the scope; the call's life is bounded here too. A
   * continuation hands a stateless retry to the chain whose call is waiting for it.
   */
  runLocal(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options?: PerSessionCallOptions,
  ): UpstreamCall {
    if (isChainScope(ctx.scope)) {
      if (options?.continuation === true) return this.#chains.resume(ctx, params ?? {}, options);
      return this.#chains.run(ctx, method, params, options, (chainOptions) =>
        this.#runWorker(ctx, upstream, method, params, chainOptions),
      );
    }
    return this.#runWorker(ctx, upstream, method, params, options);
  }

  #runWorker(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options?: CallOptions,
  ): UpstreamCall {
    const entry = this.options.upstreams.get(upstream);
    if (!entry)
      return failedCall(
        new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${upstream} is not a per-session upstream here`),
      );
    // Who is counted for the worker this call may start: its principal, else its session.
    const client = ctx.principal ?? (ctx.stateless ? undefined : ctx.scope);
    const starting = entry.workers.workerOf(ctx.scope) === undefined;
    const refused = starting ? this.#starts.refusal(client) : undefined;
    if (refused) return failedCall(refused);
    const link = this.#link(ctx);
    link.active.push(ctx);
    // The caller rides along: its token is the freshest this session has (for an upstream that acts for users).
    const withCaller = ctx.caller ? { ...options, caller: ctx.caller } : options;
    const call = entry.workers.call(method, params, withCaller, ctx.scope, () => clientIdentityOf(ctx));
    // Counted once it did start one (not when the pool refused it, full).
    if (starting && entry.workers.workerOf(ctx.scope) !== undefined) this.#starts.spend(client);
    // A call forwarded from a replica that then died has nobody left to time it out.
    const guard = setTimeout(
      () =>
        call.cancel(
          new GatewayError(
            'UPSTREAM_TIMEOUT',
            `Upstream did not answer within the hard limit of ${entry.maxTimeoutMs} ms`,
          ),
        ),
      entry.maxTimeoutMs,
    );
    const done = () => {
      clearTimeout(guard);
      const i = link.active.indexOf(ctx);
      if (i !== -1) link.active.splice(i, 1);
    };
    call.promise.then(done, done);
    return call;
  }

  /** The client side of a per-session worker: its requests and notifications reach that client. */
  peer(upstream: string, scope: string): UpstreamPeer {
    return {
      request: (method, params, signal) => this.#askClient(upstream, scope, method, params, signal),
      notification: (n) => this.#onNotification(upstream, scope, n),
    };
  }

  /**
   * Asks a 2025 session's client for what a 2026-07-28 upstream's input_required round names:
   * on the reply stream of the request in flight, else the session's own stream. Its answer
   * may reach any replica; handleResponse brings it back here.
   */
  askClient(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<McpResult> {
    return this.#guarded(upstream, ctx, method, params, (sent) =>
      this.#clientAsks.send(
        ctx.scope,
        (m) => ctx.sink.send(m) || (ctx.sessionSink?.send(m) ?? false),
        method,
        sent,
        this.options.inputWaitMs,
        signal,
      ),
    );
  }

  /** An ask through the guardrails (none configured: `send` at once). */
  #guarded(
    upstream: string,
    ctx: RequestContext | undefined,
    method: string,
    params: Record<string, unknown> | undefined,
    send: (params: Record<string, unknown> | undefined) => Promise<McpResult>,
  ): Promise<McpResult> {
    const guardrails = this.options.guardrails;
    if (!guardrails) return send(params);
    return guardrails.ask(upstream, ctx, method, params, send);
  }

  /** A client's answer to a request from a worker, here or on the replica that asked. */
  handleResponse(scope: string, response: JsonRpcResponse): boolean {
    const asker = typeof response.id === 'string' ? ClientAsks.replicaOf(response.id) : undefined;
    if (asker !== undefined && asker !== this.options.bus.replicaId) {
      this.#remote.forwardAnswer(asker, scope, response);
      return true;
    }
    return this.#clientAsks.receive(scope, response);
  }

  receiveAnswer(scope: string, response: JsonRpcResponse): void {
    this.#clientAsks.receive(scope, response);
  }

  /**
   * Whether the scope has a worker of `upstream`: here, or (as far as this replica knows) on the replica that owns it.
   */
  async hasWorker(scope: string, upstream: string): Promise<boolean> {
    const { owners } = this.options;
    const owner = await owners.ownerOf(scope, upstream);
    if (owner === undefined) return false;
    if (owner !== owners.replicaId) return true;
    return this.options.upstreams.get(upstream)?.workers.workerOf(scope) !== undefined;
  }

  /** The session ended: its workers stop, here and on whichever replica owns them. */
  release(scope: string): void {
    this.releaseLocal(scope);
    this.#remote.forgetScope(scope);
    for (const upstream of this.options.upstreams.keys()) {
      this.options.owners.ownerOf(scope, upstream).then(
        (owner) => {
          if (owner === undefined) return;
          if (owner !== this.options.owners.replicaId) this.#remote.releaseRemote(owner, scope);
          else void this.options.owners.release(scope, upstream).catch(() => undefined);
        },
        () => undefined,
      );
    }
  }

  releaseLocal(scope: string): void {
    this.#clientAsks.cancelScope(scope);
    this.#links.delete(scope);
    for (const entry of this.options.upstreams.values()) void entry.workers.release(scope);
  }

  #askClient(
    upstream: string,
    scope: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<McpResult> {
    const link = this.#links.get(scope);
    if (isChainScope(scope))
      return this.#guarded(upstream, link?.last, method, params, (sent) =>
        this.#chains.ask(scope, method, sent, signal),
      );
    if (!link)
      return Promise.reject(new GatewayError('UPSTREAM_UNAVAILABLE', 'The client of this session is not connected'));
    const capability = CLIENT_CAPABILITY.get(method);
    if (capability === undefined || link.last.clientCapabilities[capability] === undefined) {
      return Promise.reject(
        new GatewayError('METHOD_NOT_FOUND', `The client did not declare the capability for ${method}`),
      );
    }
    const timeoutMs = this.options.upstreams.get(upstream)?.maxTimeoutMs ?? 60_000;
    return this.#guarded(upstream, link.last, method, params, (sent) =>
      this.#clientAsks.send(scope, (m) => this.#deliver(link, m), method, sent, timeoutMs, signal),
    );
  }

  /** A message for the client: on the newest open reply stream of the scope, else its own stream. */
  #deliver(link: ScopeLink, message: JsonRpcMessage): boolean {
    for (let i = link.active.length - 1; i >= 0; i--) {
      if (link.active[i]!.sink.send(message)) return true;
    }
    return link.last.sessionSink?.send(message) ?? false;
  }

  #onNotification(upstream: string, scope: string, n: JsonRpcNotification): void {
    if (n.method.endsWith('/list_changed') && n.method !== 'notifications/roots/list_changed') {
      this.options.onListChanged(upstream, n.method, scope);
      return;
    }
    // A stateless client hears only its own call's progress (see InputChains), never log messages it did not ask for.
    if (isChainScope(scope)) return;
    const link = this.#links.get(scope);
    if (!link) return;
    const delivered = this.#deliver(link, this.options.exposeNotification?.(upstream, n) ?? n);
    this.options.notifications?.fromUpstream(upstream, link.last, n, delivered);
  }

  #link(ctx: RequestContext): ScopeLink {
    let link = this.#links.get(ctx.scope);
    if (!link) {
      link = { active: [], last: ctx };
      this.#links.set(ctx.scope, link);
    }
    link.last = ctx;
    return link;
  }
}

function clientIdentityOf(ctx: RequestContext): ClientIdentity {
  return {
    clientInfo: ctx.clientInfo ?? { name: 'unknown-client', version: '0' },
    capabilities: ctx.clientCapabilities,
    // The upstream speaks a 2025 revision: a stateless client's worker offers it the latest one.
    protocolVersion: isStatelessEra(ctx.protocolVersion) ? LATEST_VERSION : ctx.protocolVersion,
    // (A call forwarded from another replica names its principal but carries no token.)
    ...(ctx.principal !== undefined ? { forUser: true } : {}),
    ...(ctx.caller ? { caller: ctx.caller } : {}),
  };
}
