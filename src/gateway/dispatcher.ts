// Answers what a client sends: each request takes one chain of wrappers (request-chain.ts: its
// events, its catalog, its reply) to its method's handler (method-handlers.ts), and calls go to the
// upstream that serves them (forwarder.ts: through the in-flight table); cancellations here and on
// other replicas; the task engine and the parts the handlers share are built here.
import type { Logger } from 'pino';
import { GatewayError, toErrorObject } from '../jsonrpc/errors.js';
import { type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { HttpOrigin } from '../contracts/request-context.js';
import type { Bus } from '../cluster/bus.js';
import { publishRemoteCancel, subscribeRemoteCancels, type RemoteCancel } from '../cluster/remote-cancel.js';
import type { StatelessResults } from '../stateless/result-shape.js';
import type { UpstreamRounds } from '../stateless/upstream-rounds.js';
import { requestKey, type RequestContext } from '../contracts/request-context.js';
import type { Capabilities } from './capabilities.js';
import type { Catalog } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import { InFlightTable } from './in-flight.js';
import type { ResourceUris } from './resource-uris.js';
import { RequestEvents, type NotificationEvents } from './request-events.js';
import { MethodHandlers } from './method-handlers.js';
import { requestChain, type ReplyStep, type ResultStep, type Reenter } from './request-chain.js';
import type { Admission } from '../rate-limit/request-facts.js';
import { SessionCatalogs, targetOf } from './session-catalogs.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { ServerView } from './server-views.js';
import type { Subscriptions } from './subscriptions.js';
import type { UpstreamEntry } from './upstream-entry.js';
import { Forwarder } from './forwarder.js';
import { FairShares } from './fair-shares.js';
import { TaskEngine, type TaskEngineOptions } from '../tasks/engine.js';
import { chainScopeOf } from '../stateless/input-chains.js';
import type { ToolSearchConfig } from '../config/schema.js';
import type { Guardrails } from '../guardrails/chains.js';
import { toolSearchStep } from './tool-search-step.js';
import type { IndexShare } from '../tool-search/index-share.js';
import { guardedTaskResult, guardrailStep } from './guardrail-step.js';
import { TaskPassThrough } from '../tasks/pass-through.js';
import { policyStep } from './policy-step.js';
import type { LivePolicy } from '../policy/live-policy.js';

export interface DispatcherOptions {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  /** Calls on per-session workers, wherever their owner replica is. */
  perSession: PerSessionRouter;
  /** Carries cancellations to the replica that holds the request (no affinity between replicas). */
  bus: Bus;
  catalogs: CatalogManager;
  capabilities: Capabilities;
  subscriptions: Subscriptions;
  /** Upstreams whose resource URIs are prefixed: results leave with the client's URIs. */
  uris: ResourceUris;
  /** How results leave for stateless (2026-07-28) clients. */
  statelessResults: StatelessResults;
  /** Input-required rounds with 2026-07-28 upstreams: the gateway's signed requestState. */
  rounds: UpstreamRounds;
  /** How many input_required rounds one request to such an upstream may take. */
  maxInputRounds: number;
  pageSize: number;
  log: Logger;
  /** Where each request's end is published (metrics and the audit log subscribe). */
  diagnostics: DataPathEvents;
  /** Tasks (some upstream has `tasks:`): none, and tools/call is never a task. */
  tasks?: TaskEngineOptions;
  /** Tasks of upstreams that run them themselves. */
  passThrough: TaskPassThrough;
  notifications?: NotificationEvents;
  /** The rate limits and quotas at start (a reload sets others: setAdmissions). */
  admissions?: readonly Admission[] | undefined;
  /** The main path's tool search (servers[] carry theirs), and the path itself (a metrics label). */
  toolSearch?: { config: ToolSearchConfig | undefined; path: string };
  /** Where large tool search indexes are kept for the other replicas; none: each builds its own. */
  indexShare?: IndexShare;
  /** The guardrails (config `interceptors`: top level, servers[] and upstreams[]); none: no wrapper. */
  guardrails?: Guardrails | undefined;
  /** The authorization policy in force (authorization.policyFile); a reload swaps its set. */
  policy?: LivePolicy | undefined;
}

export class Dispatcher {
  readonly #inFlight = new InFlightTable();
  /** upstreams[].fairness: each principal's share of an upstream's calls. */
  readonly #fairShares: FairShares;
  readonly #events: RequestEvents;
  readonly #sessionCatalogs: SessionCatalogs;
  readonly #forwarder: Forwarder;
  #unsubscribeCancels: (() => Promise<void>) | undefined;
  readonly #tasks: TaskEngine | undefined;
  /** Every request's way: the wrappers around the method table (request-chain.ts). */
  #chain: ReplyStep;
  readonly #handle: ResultStep;

  constructor(private readonly options: DispatcherOptions) {
    this.#events = new RequestEvents(options.diagnostics, options.catalogs);
    this.#fairShares = new FairShares(options.diagnostics);
    const { upstreams, catalogs, perSession, log } = options;
    this.#sessionCatalogs = new SessionCatalogs({
      upstreams,
      catalogs,
      log,
      call: (ctx, upstream, method, params) =>
        perSession.call(ctx, upstream, method, params, undefined, () => undefined),
      hasWorker: (scope, upstream) => perSession.hasWorker(scope, upstream),
    });
    this.#forwarder = new Forwarder({
      ...options,
      inFlight: this.#inFlight,
      events: this.#events,
      sessionCatalogs: this.#sessionCatalogs,
      fairShares: this.#fairShares,
    });
    this.#tasks =
      options.tasks &&
      new TaskEngine(options.tasks, {
        run: async (ctx, request) => {
          // What the call names, as for a plain call: a task of a shared upstream's tool starts no per-session worker.
          const catalog = await this.#sessionCatalogs.catalogFor(ctx, targetOf(request, undefined));
          const route = catalog.tool(String(request.params?.name));
          const result = await this.#forwarder.forwardNamed(ctx, request, route, 'Unknown tool', catalog);
          return guardedTaskResult(options.guardrails, ctx, route?.upstream, result);
        },
        cancel: (scope, requestId) => this.#cancel(scope, requestId, 'Request cancelled: the task was cancelled'),
        releaseChain: (state) => {
          const scope = chainScopeOf(state);
          if (scope !== undefined) options.perSession.release(scope);
        },
      });
    const handlers = new MethodHandlers({
      ...options,
      tasks: this.#tasks,
      forwarder: this.#forwarder,
      sessionCatalogs: this.#sessionCatalogs,
      events: this.#events,
    });
    this.#handle = handlers.handle;
    this.#chain = this.#compose(options.admissions);
  }

  /** Composed once (and again when the rate limits or quotas change): a request allocates nothing for its way. */
  #compose(admissions: readonly Admission[] | undefined): ReplyStep {
    const options = this.options;
    const parts = {
      ...options,
      events: this.#events,
      sessionCatalogs: this.#sessionCatalogs,
      admissions,
      guardrails: options.guardrails
        ? guardrailStep(options.guardrails, { passedThrough: (ctx, id) => this.#passedThrough(ctx, id) })
        : undefined,
      ...(options.policy ? { authorization: policyStep(options.policy, options.diagnostics) } : {}),
      inner: (reenter: Reenter) =>
        toolSearchStep(
          {
            ...options,
            main: options.toolSearch,
            mainPath: options.toolSearch?.path ?? '/mcp',
            sessionCatalogs: this.#sessionCatalogs,
            tasks: this.#tasks,
          },
          reenter,
        ),
    };
    return requestChain(parts, this.#handle);
  }

  /** The upstream of a wrapped task id (an upstream's own task); undefined for the gateway's own, or a bad one. */
  #passedThrough(ctx: RequestContext, taskId: unknown): string | undefined {
    if (!TaskPassThrough.isWrapped(taskId)) return undefined;
    try {
      return this.options.passThrough.unwrap(ctx, taskId).upstream;
    } catch {
      return undefined; // (its read is refused as its handler refuses it)
    }
  }

  /** A reload's rate limits and quotas: from the next request on (one in flight keeps the chain it took). */
  setAdmissions(admissions: readonly Admission[]): void {
    this.#chain = this.#compose(admissions);
  }

  /** Client requests forwarded and not yet answered, on this replica. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** upstreams[].fairness: calls in flight and waiting on `upstream` under a principal's share. */
  fairCounts(upstream: string): { inFlight: number; queued: number } {
    return this.#fairShares.tally(upstream);
  }

  async start(): Promise<void> {
    this.#unsubscribeCancels = await subscribeRemoteCancels(this.options.bus, this.options.log, (cancel) =>
      this.#onRemoteCancel(cancel),
    );
    await this.#tasks?.start();
  }

  async close(): Promise<void> {
    await this.#unsubscribeCancels?.().catch(() => undefined);
    // Before their calls end: a task fails with "replica stopped", not with the cancelled call's error.
    const failed = await this.#tasks?.shutdown();
    if (failed) this.options.log.info({ tasks: failed }, 'shutdown: tasks running here failed');
    this.#inFlight.cancelAll(new GatewayError('SHUTTING_DOWN'));
  }

  /** The catalogs 2025 sessions on this replica last listed from their own per-session workers. */
  sessionCatalogs(): Catalog[] {
    return this.#sessionCatalogs.kept();
  }

  /** Ends everything in flight for a scope (a session was deleted or expired). */
  releaseScope(scope: string): void {
    this.#inFlight.cancelScope(scope, new GatewayError('REQUEST_CANCELLED', 'Session ended'));
    this.#sessionCatalogs.forget(scope);
    this.#tasks?.endSession(scope);
  }

  /** The gateway's tasks (none without task tools): listen streams follow them; tests read what they hold. */
  get taskEngine(): TaskEngine | undefined {
    return this.#tasks;
  }

  /** One of the scope's workers said its lists changed (here or on another replica): its kept lists go. */
  forgetLists(scope: string): void {
    this.#sessionCatalogs.forget(scope);
  }

  /** `view`: the virtual server (servers[]) the request came to; none: the whole catalog. */
  handleRequest(ctx: RequestContext, request: JsonRpcRequest, view?: ServerView): Promise<JsonRpcResponse> {
    return this.#chain(ctx, request, view, undefined);
  }

  /**
   * initialize, answered by `answer` (the transport opens the session): published like every
   * other request, so it is counted, audited and traced too.
   */
  initialize<T extends { protocolVersion: string }>(
    request: JsonRpcRequest,
    http: HttpOrigin | undefined,
    principal: string | undefined,
    answer: () => T,
  ): T {
    const started = performance.now();
    const start = this.#events.start(undefined, '', http, request);
    let answered: T | undefined;
    let errorType = '';
    let errorCode = '';
    try {
      answered = answer();
      return answered;
    } catch (err) {
      const error = toErrorObject(err);
      errorType = err instanceof GatewayError ? err.type : 'INTERNAL_ERROR';
      errorCode = String(error.code);
      throw err;
    } finally {
      if (start) {
        this.#events.done(request);
        if (answered) start.protocolVersion = answered.protocolVersion;
      }
      const ctx = { stateless: false, scope: '', principal, protocolVersion: answered?.protocolVersion ?? '', http };
      this.#events.end(ctx, request, started, start, errorType, errorCode, undefined);
    }
  }

  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/cancelled') {
      const id = notification.params?.requestId;
      if (typeof id !== 'string' && typeof id !== 'number') return;
      const reason = notification.params?.reason;
      this.#cancel(ctx.scope, id, typeof reason === 'string' ? `Request cancelled: ${reason}` : undefined);
    }
    // notifications/initialized, roots/list_changed and the like need no action in shared mode.
  }

  #cancel(scope: string, id: string | number, message: string | undefined): void {
    if (!this.#inFlight.cancel(requestKey(scope, id), new GatewayError('REQUEST_CANCELLED', message))) {
      // Not here: the request may be in flight on another replica.
      publishRemoteCancel(this.options.bus, { scope, requestId: id, ...(message ? { message } : {}) });
    }
  }

  /** The client's answer to a request an upstream sent it. */
  handleResponse(ctx: RequestContext, response: JsonRpcResponse): void {
    this.#tasks?.onClientResponse(ctx, response.id);
    if (!this.options.perSession.handleResponse(ctx.scope, response)) {
      this.options.log.debug({ id: response.id }, 'client answered a request nobody is waiting for');
    }
  }

  /** A client's notifications/cancelled that reached a replica not holding the request. */
  #onRemoteCancel(cancel: RemoteCancel): void {
    this.#inFlight.cancel(
      requestKey(cancel.scope, cancel.requestId),
      new GatewayError('REQUEST_CANCELLED', cancel.message),
    );
  }
}
