// Answers what a client sends: each request's method goes to its handler, and calls go to the
// upstream that serves them (forwarder.ts: through the in-flight table); cancellations here and on
// other replicas; every request's end is published here (request:end), for metrics and audit.
import { openUserWorkers } from './user-workers.js';
import type { Logger } from 'pino';
import { GatewayError, UpstreamRpcError, errorResponse, toErrorObject } from '../jsonrpc/errors.js';
import { type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { LOG_LEVELS } from '../jsonrpc/meta-keys.js';
import type { DataPathEvents } from '../observability/events.js';
import type { HttpOrigin } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import type { Bus } from '../cluster/bus.js';
import { publishRemoteCancel, subscribeRemoteCancels, type RemoteCancel } from '../cluster/remote-cancel.js';
import type { StatelessResults } from '../modern/result-shape.js';
import type { UpstreamRounds } from '../modern/upstream-rounds.js';
import { requestKey, type RequestContext } from '../contracts/request-context.js';
import type { Capabilities } from './capabilities.js';
import { LISTS, type Catalog } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import { InFlightTable } from './in-flight.js';
import type { ResourceUris } from './resource-uris.js';
import { paginate } from './pagination.js';
import { RequestEvents, errorCodeLabel, type NotificationEvents } from './request-events.js';
import { SessionCatalogs, targetOf } from './session-catalogs.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { ServerView } from './server-views.js';
import type { Subscriptions } from './subscriptions.js';
import type { UpstreamEntry } from './upstream-entry.js';
import { Forwarder } from './forwarder.js';
import { TaskEngine, type TaskEngineOptions } from '../tasks/engine.js';
import type { TaskPassThrough } from '../tasks/pass-through.js';
import { LIST_METHODS } from '../jsonrpc/list-methods.js';
import { CATALOG_METHODS, completionTarget, requireString, resourceNotFound } from './request-params.js';
import { chainScopeOf } from '../modern/input-chains.js';

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
}

export class Dispatcher {
  readonly #inFlight = new InFlightTable();
  readonly #events: RequestEvents;
  readonly #sessionCatalogs: SessionCatalogs;
  readonly #forwarder: Forwarder;
  #unsubscribeCancels: (() => Promise<void>) | undefined;
  readonly #tasks: TaskEngine | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.#events = new RequestEvents(options.diagnostics, options.catalogs);
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
    });
    this.#tasks =
      options.tasks &&
      new TaskEngine(options.tasks, {
        run: async (ctx, request) => {
          // What the call names, as for a plain call: a task of a shared upstream's tool starts no per-session worker.
          const catalog = await this.#sessionCatalogs.catalogFor(ctx, targetOf(request, undefined));
          return this.#forwarder.forwardNamed(
            ctx,
            request,
            catalog.tool(String(request.params?.name)),
            'Unknown tool',
            catalog,
          );
        },
        cancel: (scope, requestId) => this.#cancel(scope, requestId, 'Request cancelled: the task was cancelled'),
        releaseChain: (state) => {
          const scope = chainScopeOf(state);
          if (scope !== undefined) options.perSession.release(scope);
        },
      });
  }

  /** Client requests forwarded and not yet answered, on this replica. */
  get inFlight(): number {
    return this.#inFlight.size;
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
  async handleRequest(ctx: RequestContext, request: JsonRpcRequest, view?: ServerView): Promise<JsonRpcResponse> {
    const started = performance.now();
    const start = this.#events.start(ctx.stateless ? undefined : ctx.scope, ctx.protocolVersion, ctx.http, request);
    let errorType = '';
    let errorCode = '';
    let result: McpResult | undefined;
    try {
      // A session with workers of its own reads their lists; everyone else the shared catalog.
      const catalog = CATALOG_METHODS.has(request.method)
        ? await this.#sessionCatalogs.catalogFor(ctx, targetOf(request, view))
        : this.options.catalogs.catalog;
      if (view) {
        // A virtual server's names and fixed arguments become the catalog's; metrics see the catalog's name.
        request = view.rewrite(ctx, request, catalog);
        if (start) this.#events.follow(request, start);
      }
      result = await this.#dispatch(ctx, request, view, catalog);
      return {
        jsonrpc: '2.0',
        id: request.id,
        result: ctx.stateless ? this.options.statelessResults.shape(ctx, request.method, result) : result,
      };
    } catch (err) {
      const error = toErrorObject(err);
      errorType = err instanceof GatewayError ? err.type : errorCodeLabel(error.code);
      // The table's codes are few; an upstream's own are bounded to JSON-RPC's reserved range.
      errorCode = err instanceof GatewayError ? String(error.code) : errorCodeLabel(error.code);
      if (!(err instanceof GatewayError) && !(err instanceof UpstreamRpcError)) {
        this.options.log.error(
          { err, method: request.method, reqId: ctx.http?.requestId },
          'unexpected error handling a request',
        );
      }
      return errorResponse(request.id, error) as JsonRpcResponse;
    } finally {
      if (start) this.#events.done(request);
      this.#events.end(ctx, request, started, start, errorType, errorCode, result);
    }
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

  async #dispatch(
    ctx: RequestContext,
    request: JsonRpcRequest,
    view: ServerView | undefined,
    catalog: Catalog,
  ): Promise<McpResult> {
    const params = request.params;
    const listKind = LIST_METHODS.get(request.method);
    if (listKind) {
      if (await openUserWorkers(ctx, this.options))
        return this.#dispatch(ctx, request, view, await this.#sessionCatalogs.catalogFor(ctx));
      const all = view ? view.list(catalog, listKind) : catalog.list(listKind);
      const mayCall = ctx.mayCall;
      const visible = listKind === 'tools' && mayCall ? all.filter((t) => mayCall(String(t.name))) : all;
      let { page, nextCursor } = paginate(visible, params?.cursor, this.options.pageSize);
      if (listKind === 'tools')
        page = this.options.passThrough.decorate(ctx, page, (name) => catalog.tool(name), this.#tasks);
      return nextCursor === undefined
        ? { [LISTS[listKind].field]: page }
        : { [LISTS[listKind].field]: page, nextCursor };
    }
    switch (request.method) {
      case 'ping':
        return {};
      case 'server/discover':
        if (!ctx.stateless) break;
        return this.options.capabilities.discover();
      case 'tools/call': {
        const route = catalog.tool(requireString(params, 'name'));
        // Before anything is taken (an id, a slot): an invalid call never reaches the upstream.
        route?.arguments?.check(params?.arguments);
        // An upstream that runs tasks itself gets the client's opt-in, and its task id leaves wrapped.
        if (this.options.passThrough.takes(ctx, route, this.#tasks))
          return this.options.passThrough.created(
            ctx,
            route.upstream,
            await this.#forwarder.forwardNamed(ctx, request, route, 'Unknown tool', catalog),
          );
        const task = route && (await this.#tasks?.intercept(ctx, request, route));
        if (task) return task;
        // A task hint the gateway did not act on is not the upstream's business.
        if (params && 'task' in params) request = { ...request, params: { ...params, task: undefined } };
        // Awaited, not returned: an async function resolved with a promise takes two more microtask turns.
        return await this.#forwarder.forwardNamed(ctx, request, route, 'Unknown tool', catalog);
      }
      case 'prompts/get':
        return await this.#forwarder.forwardNamed(
          ctx,
          request,
          catalog.prompt(requireString(params, 'name')),
          'Unknown prompt',
          catalog,
        );
      case 'resources/read': {
        const uri = requireString(params, 'uri');
        const route = catalog.resource(uri);
        if (!route) throw resourceNotFound(ctx, uri);
        const result = await this.#forwarder.forward(
          ctx,
          request,
          route.upstream,
          route.original === uri ? params : { ...params, uri: route.original },
        );
        return this.options.uris.result(route.upstream, request.method, result);
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return this.#subscription(ctx, request, catalog);
      case 'logging/setLevel':
        return this.#setLevel(ctx, request);
      case 'completion/complete':
        return this.#complete(ctx, request, catalog);
      case 'initialize':
        throw new GatewayError('INVALID_REQUEST', 'Session is already initialized');
    }
    if (
      TaskEngine.handles(request.method) &&
      this.options.passThrough.owns(ctx, request.method, params?.taskId, this.#tasks)
    )
      return this.options.passThrough.handle(ctx, request.method, params ?? {}, (upstream, p) =>
        this.#forwarder.forward(ctx, request, upstream, p),
      );
    if (this.#tasks && TaskEngine.handles(request.method)) return this.#tasks.handle(ctx, request);
    // A stateless request gets here only for a method of an extension this gateway does not run (tasks/*).
    throw new GatewayError(
      ctx.stateless ? 'MODERN_METHOD_NOT_FOUND' : 'METHOD_NOT_FOUND',
      `Method not found: ${request.method}`,
    );
  }

  async #subscription(ctx: RequestContext, request: JsonRpcRequest, catalog: Catalog): Promise<McpResult> {
    const uri = requireString(request.params, 'uri');
    const route = catalog.resource(uri);
    if (!route) throw resourceNotFound(ctx, uri);
    const result = await this.#forwarder.forward(ctx, request, route.upstream, {
      ...request.params,
      uri: route.original,
    });
    // Updates name the upstream's own URI: they are told apart by that, and leave with the client's.
    this.options.subscriptions.record(ctx, request.method, route.upstream, route.original);
    return result;
  }

  async #setLevel(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const level = requireString(request.params, 'level');
    if (!LOG_LEVELS.includes(level)) throw new GatewayError('INVALID_PARAMS', `Unknown log level: ${level}`);
    // Kept with the session: its calls to 2026-07-28 upstreams (no session there) ask for it.
    await ctx.setLogLevel?.(level);
    // Only a session's own workers take its level; a shared worker's level would be everyone's.
    const own = [...this.options.upstreams].filter(([, e]) => e.workers.workerOf(ctx.scope));
    await Promise.all(
      own.map(([name]) =>
        this.#forwarder.forward(
          ctx,
          this.#events.derive(request, { ...request, id: `${String(request.id)}:${name}` }),
          name,
          request.params,
        ),
      ),
    );
    return {};
  }

  #complete(ctx: RequestContext, request: JsonRpcRequest, catalog: Catalog): Promise<McpResult> {
    const { upstream, params } = completionTarget(ctx, request.params, catalog);
    return this.#forwarder.forward(ctx, request, upstream, params);
  }
}
