// The one MCP server clients see, as the transport knows it (McpHandler): a facade that builds
// and joins its parts, the dispatcher, catalog manager, subscriptions and capabilities.
import type { SpentStates } from '../contracts/spent-states.js';
import type { Logger } from 'pino';
import type { ServerEntryConfig, StatelessConfig, ToolSearchConfig } from '../config/schema.js';
import type { IndexShare } from '../tool-search/index-share.js';
import type { Guardrails } from '../guardrails/chains.js';
import type { Identity } from '../contracts/authenticator.js';
import { GatewayError, errorResponse } from '../jsonrpc/errors.js';
import type { JsonRpcId, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { ClientIdentity, McpResult, UpstreamPeer } from '../contracts/upstream.js';
import type { Bus } from '../cluster/bus.js';
import { announceListChange, subscribeListChanges, type ListChange } from '../cluster/list-changes.js';
import type { HttpOrigin, MessageSink, RequestContext } from '../contracts/request-context.js';
import type { McpHandler, MirroredParam } from '../contracts/mcp-handler.js';
import { StatelessResults } from '../stateless/result-shape.js';
import { UpstreamRounds } from '../stateless/upstream-rounds.js';
import { Capabilities } from './capabilities.js';
import type { Catalog } from './catalog.js';
import { CatalogManager, type StagedCatalog } from './catalog-manager.js';
import { Dispatcher, type DispatcherOptions } from './dispatcher.js';
import { NotificationEvents } from './request-events.js';
import { INTERNALS, type VirtualServerInternals } from './internals.js';
import type { PinPolicy } from './pin-policy.js';
import type { PerSessionRouter } from './per-session-router.js';
import { ResourceUris } from './resource-uris.js';
import { ServerViews, viewCatalog, viewProblems, type ServerView, ServerViewsError } from './server-views.js';
import type { ServerCatalogEntry } from './server-views.js';
import { Subscriptions } from './subscriptions.js';
import { mergedHints, type UpstreamEntry } from './upstream-entry.js';
import type { TaskEngineOptions } from '../tasks/engine.js';
import { TaskPassThrough } from '../tasks/pass-through.js';
import { declaresTasks, tasksExtensionRequired } from '../tasks/shapes.js';
import type { Admission } from '../rate-limit/request-facts.js';

export interface VirtualServerOptions {
  upstreams: Map<string, UpstreamEntry>;
  /** Calls on per-session workers, wherever their owner replica is. */
  perSession: PerSessionRouter;
  /** Carries cancellations to the replica that holds the request, and list changes to every replica. */
  bus: Bus;
  /** How the gateway introduces itself to a per-session upstream it probes for its lists. */
  probeIdentity: ClientIdentity;
  serverInfo: { name: string; version: string };
  pageSize: number;
  /** Cache hints on stateless (2026-07-28) results, and the rounds with 2026-07-28 upstreams (`stateless` config). */
  caching: Pick<StatelessConfig, 'listTtlMs' | 'readTtlMs'> &
    Partial<Pick<StatelessConfig, 'stateSecret' | 'stateTtlMs' | 'maxInputRounds'>>;
  log: Logger;
  /** Where the data path's events go (metrics and the audit log subscribe). */
  diagnostics: DataPathEvents;
  /** The virtual servers (`servers:`): curated views over the catalog, each on a path of its own. */
  servers?: readonly ServerEntryConfig[];
  /** Where used requestStates are recorded (Redis with Redis sessions: a replay is refused on every replica). */
  spentStates?: SpentStates;
  /** Tools and prompts held to the pin lock (`pinning`). */
  pins?: PinPolicy;
  /** Tasks, when some upstream runs tools as tasks (`upstreams[].tasks`). */
  tasks?: TaskEngineOptions;
  /** Tasks of upstreams that run them themselves (one per process, shared with the per-session router). */
  passThrough?: TaskPassThrough;
  /** Where notifications are published (tracing; shared with the per-session router); default: one of its own. */
  notifications?: NotificationEvents;
  /** The main path's `toolSearch` and the path (servers[] carry their own): taken at start. */
  toolSearch?: { config: ToolSearchConfig | undefined; path: string };
  /** Where large tool search indexes are kept for the other replicas (Redis); none: each builds its own. */
  indexShare?: IndexShare;
  /** The guardrails (shared with the per-session router, whose asks they check); closed with the server. */
  guardrails?: Guardrails | undefined;
  policy?: DispatcherOptions['policy']; // authorization.policyFile: every request decided before routing
}

const NO_MIRRORED: readonly MirroredParam[] = [];

/** The one MCP server clients see, built from every upstream's catalog. */
export class VirtualServer implements McpHandler {
  readonly #catalogs: CatalogManager;
  readonly #capabilities: Capabilities;
  readonly #subscriptions: Subscriptions;
  readonly #dispatcher: Dispatcher;
  readonly #views: ServerViews;
  readonly #passThrough: TaskPassThrough;
  readonly #notifications: NotificationEvents;
  #unsubscribeLists: (() => Promise<void>) | undefined;

  constructor(private readonly options: VirtualServerOptions) {
    const { upstreams, perSession, log } = options;
    this.#notifications =
      options.notifications ??
      new NotificationEvents(options.diagnostics, (u) => upstreams.get(u)?.networkTransport ?? 'pipe');
    this.#views = new ServerViews(options.servers ?? []);
    this.#catalogs = new CatalogManager({ upstreams, probeIdentity: options.probeIdentity, log, pins: options.pins });
    const passThrough = options.passThrough ?? new TaskPassThrough(upstreams, options.caching.stateSecret);
    this.#passThrough = passThrough;
    this.#capabilities = new Capabilities(upstreams, options.serverInfo, options.tasks !== undefined, (stateless) =>
      passThrough.any(stateless),
    );
    const uris = new ResourceUris(upstreams);
    this.#subscriptions = new Subscriptions({ upstreams, catalogs: this.#catalogs, perSession, uris, log });
    this.#dispatcher = new Dispatcher({
      upstreams,
      perSession,
      bus: options.bus,
      catalogs: this.#catalogs,
      capabilities: this.#capabilities,
      subscriptions: this.#subscriptions,
      uris,
      statelessResults: new StatelessResults({
        serverInfo: options.serverInfo,
        caching: options.caching,
        upstreamHints: (method) => mergedHints(upstreams, method),
      }),
      rounds: new UpstreamRounds({
        secret: options.caching.stateSecret,
        ttlMs: options.caching.stateTtlMs ?? 600_000,
        maxRounds: options.caching.maxInputRounds ?? 10,
        spent: options.spentStates,
      }),
      maxInputRounds: options.caching.maxInputRounds ?? 10,
      pageSize: options.pageSize,
      log,
      diagnostics: options.diagnostics,
      ...(options.tasks ? { tasks: options.tasks } : {}),
      passThrough,
      notifications: this.#notifications,
      ...(options.toolSearch ? { toolSearch: options.toolSearch } : {}),
      ...(options.indexShare ? { indexShare: options.indexShare } : {}),
      guardrails: options.guardrails,
      policy: options.policy,
    });
  }

  get catalog(): Catalog {
    return this.#catalogs.catalog;
  }

  /** The rate limits, then the quotas (none: no rule of either), from the next request on. */
  setAdmissions(admissions: readonly Admission[]): void {
    this.#dispatcher.setAdmissions(admissions);
  }

  /** The catalogs 2025 sessions on this replica last listed from their own per-session workers (for /status). */
  sessionCatalogs(): Catalog[] {
    return this.#dispatcher.sessionCatalogs();
  }

  /** Each virtual server (servers[]) with its catalog as its clients see it, and the sessions' own through it. */
  serverCatalogs(): ServerCatalogEntry[] {
    return this.#views.paths().map((path) => ({
      path,
      view: () => this.#views.get(path),
      catalog: () => viewCatalog(this.#views.get(path), this.#catalogs.catalog),
      sessions: () => this.sessionCatalogs().map((c) => viewCatalog(this.#views.get(path), c)),
    }));
  }

  /** Whether a 2025 session lists `upstream` from a worker of its own (mode per-session), not the shared catalog. */
  listsPerSession(upstream: string): boolean {
    return this.options.upstreams.get(upstream)?.workers.perScope === true;
  }

  /** For tests only (see internals.ts). */
  get [INTERNALS](): VirtualServerInternals {
    const { upstreams } = this.options;
    const dispatcher = this.#dispatcher;
    return {
      get inFlight() {
        return dispatcher.inFlight;
      },
      get tasks() {
        return dispatcher.taskEngine?.held;
      },
      fairShares: (upstream) => dispatcher.fairCounts(upstream),
      perSessionWorkers: (upstream) => upstreams.get(upstream)?.workers.scopes ?? 0,
    };
  }

  /**
   * Brings up the upstreams and their catalog (see CatalogManager.start), then hears cancellations from other replicas.
   */
  async start(): Promise<void> {
    await this.#catalogs.start();
    // Overrides can only be checked against the upstreams' real lists: a misfit stops the start.
    const { errors, warnings } = viewProblems(this.#views.configs, this.#catalogs.catalog, this.#catalogs.complete);
    for (const w of warnings) this.options.log.warn(w);
    if (errors.length > 0) throw new ServerViewsError(errors);
    await this.#dispatcher.start();
    const { bus, log } = this.options;
    this.#unsubscribeLists = await subscribeListChanges(bus, log, (change) => this.#listsChanged(change));
  }

  /** The paths of the virtual servers in force. */
  get serverPaths(): string[] {
    return this.#views.paths();
  }

  /** The own interceptor list (`servers[].interceptors`) of the virtual server at `path`, as in force now. */
  endpointInterceptors(path: string): ServerEntryConfig['interceptors'] {
    return this.#views.get(path)?.config.interceptors;
  }

  /**
   * Replaces the virtual servers (a reload): checked against the current catalog first, and on
   * any error nothing changes (ServerViewsError). Every session then hears list_changed, as its
   * server's lists may have changed. Returns the warnings (globs that select nothing).
   */
  setServers(servers: readonly ServerEntryConfig[]): string[] {
    const { errors, warnings } = viewProblems(servers, this.#catalogs.catalog, this.#catalogs.complete);
    if (errors.length > 0) throw new ServerViewsError(errors);
    this.#views.replace(servers);
    this.#catalogs.announce([
      'notifications/tools/list_changed',
      'notifications/prompts/list_changed',
      'notifications/resources/list_changed',
    ]);
    return warnings;
  }

  /**
   * The McpHandler of the virtual server at `path`: the same server over the same upstreams,
   * through that server's view (looked up per request, so a reload takes effect at once).
   * `admit` throws the 403 of a client its principals or scopes leave out, or the 404 of a
   * server a reload removed.
   */
  forServer(path: string): McpHandler & { admit(identity: Identity | undefined): void } {
    const views = this.#views;
    const view = (): ServerView => {
      const v = views.get(path);
      if (!v) throw new GatewayError('SERVER_NOT_FOUND', `No virtual server at ${path} any more`);
      return v;
    };
    return {
      admit: (identity) => view().admit(identity),
      initialize: (params, http, principal, id) => this.initialize(params, http, principal, id),
      capabilities: (stateless) => this.capabilities(stateless),
      exposedTool: (name) => views.get(path)?.exposedTool(name),
      mirroredParams: (tool) => {
        const v = views.get(path);
        const exposed = v?.exposedTool(tool);
        return v && exposed !== undefined ? v.mirrored(exposed, this.mirroredParams(exposed)) : NO_MIRRORED;
      },
      handleRequest: async (ctx, request) => {
        const v = views.get(path);
        if (!v) return errorResponse(request.id, new GatewayError('SERVER_NOT_FOUND').toJsonRpc()) as JsonRpcResponse;
        return await this.#dispatcher.handleRequest(ctx, request, v);
      },
      handleNotification: (ctx, n) => this.handleNotification(ctx, n),
      handleResponse: (ctx, r) => this.handleResponse(ctx, r),
      watchResources: (ctx, uris, sink) => {
        const v = views.get(path);
        const mine = Array.isArray(uris) && v ? uris.filter((u) => typeof u === 'string' && v.selectsResource(u)) : [];
        return this.watchResources(ctx, mine, sink);
      },
      watchTasks: (ctx, taskIds, sink) => this.watchTasks(ctx, taskIds, sink),
      releaseScope: (scope) => this.releaseScope(scope),
    };
  }

  initialize(
    params: Record<string, unknown> | undefined,
    http?: HttpOrigin,
    principal?: string,
    id: JsonRpcId = 0,
  ): { protocolVersion: string; result: McpResult } {
    const request: JsonRpcRequest = { jsonrpc: '2.0', id, method: 'initialize', ...(params ? { params } : {}) };
    return this.#dispatcher.initialize(request, http, principal, () => this.#capabilities.initialize(params));
  }

  capabilities(stateless: boolean): Record<string, unknown> {
    return this.#capabilities.merged(stateless);
  }

  mirroredParams(tool: string): readonly MirroredParam[] {
    return this.#catalogs.catalog.tool(tool)?.mirrored ?? NO_MIRRORED;
  }

  /** The whole catalog, under its own names. */
  exposedTool(name: string): string {
    return name;
  }

  handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse> {
    return this.#dispatcher.handleRequest(ctx, request);
  }

  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void {
    this.#notifications.fromClient(ctx, notification);
    this.#dispatcher.handleNotification(ctx, notification);
  }

  handleResponse(ctx: RequestContext, response: JsonRpcResponse): void {
    this.#dispatcher.handleResponse(ctx, response);
  }

  watchResources(ctx: RequestContext, uris: unknown, sink: MessageSink): string[] {
    return this.#subscriptions.watch(ctx, uris, sink);
  }

  async watchTasks(ctx: RequestContext, taskIds: unknown, sink: MessageSink): Promise<string[]> {
    if (!Array.isArray(taskIds)) return [];
    // SEP-2663: task status notifications are the extension's; asked for without it, -32021.
    if (!declaresTasks(ctx.clientCapabilities)) throw tasksExtensionRequired('subscriptions/listen with taskIds');
    const engine = this.#dispatcher.taskEngine;
    const limits = this.options.tasks?.limits;
    if (!engine || !limits) return [];
    const ids = [...new Set(taskIds.filter((id): id is string => typeof id === 'string'))];
    // No client has more live tasks than this: more ids than that cost reads and name nothing more.
    if (ids.length > limits.maxPerPrincipal)
      throw new GatewayError(
        'INVALID_PARAMS',
        `Invalid params: params.notifications.taskIds names more than tasks.maxPerPrincipal ` +
          `(${limits.maxPerPrincipal}) tasks`,
      );
    return engine.follow(ctx, ids, sink);
  }

  releaseScope(scope: string): void {
    this.#dispatcher.releaseScope(scope);
    this.#subscriptions.release(scope);
    this.options.perSession.release(scope);
  }

  async close(): Promise<void> {
    await this.#unsubscribeLists?.().catch(() => undefined);
    this.#catalogs.close();
    await this.#dispatcher.close();
    await this.options.perSession.close();
    await Promise.all([...this.options.upstreams.values()].map((u) => u.workers.close()));
    await this.options.guardrails?.close(); // last: workers' asks pass them until the workers are gone
  }

  /** The client side of a shared worker: nobody to ask, but its list changes still count. */
  sharedPeer(upstream: string): UpstreamPeer {
    return {
      request: async (method) => {
        // A shared worker serves many sessions: a request from it cannot be tied to one client.
        throw new GatewayError(
          'METHOD_NOT_FOUND',
          `${method} is not available to a shared upstream worker (use mode: per-session)`,
        );
      },
      notification: (n) => this.#onUpstreamNotification(upstream, n),
    };
  }

  /** Called with a list_changed method after the merged catalog changed. */
  onListChanged(listener: (method: string) => void): void {
    this.#catalogs.onListChanged(listener);
  }

  /**
   * A per-session worker's list_changed, for `scope`: that session's kept lists go at once, the
   * shared catalog refreshes (spaced: some upstreams announce one as each worker starts), and
   * every other replica is told to do the same.
   */
  listChanged(upstream: string, method: string, scope: string): void {
    this.#listsChanged({ upstream, method, scope });
    announceListChange(this.options.bus, { upstream, method, scope });
  }

  #listsChanged(change: Omit<ListChange, 'replica'>): void {
    this.#dispatcher.forgetLists(change.scope);
    this.#catalogs.refreshSpaced(change.upstream, change.method);
  }

  /**
   * A config reload's catalog, checked but not in place: `entries` are the added or changed
   * upstreams (their workers start now), `removed` the ones that go (see CatalogManager.stage).
   */
  /** What is wrong with `servers` over `catalog` (a reload's staged one): overrides of missing tools, collisions… */
  serverProblems(servers: readonly ServerEntryConfig[], catalog: StagedCatalog['catalog']): string[] {
    return viewProblems(servers, catalog, this.#catalogs.complete).errors;
  }

  stageCatalog(entries: ReadonlyMap<string, UpstreamEntry>, removed: readonly string[]): Promise<StagedCatalog> {
    return this.#catalogs.stage(entries, removed);
  }

  /** A remote upstream went down or came back (see CatalogManager.setAvailable). */
  setAvailable(upstream: string, available: boolean): void {
    this.#catalogs.setAvailable(upstream, available);
  }

  #onUpstreamNotification(upstream: string, n: JsonRpcNotification): void {
    if (n.method.endsWith('/list_changed') && n.method !== 'notifications/roots/list_changed') {
      this.#catalogs.refreshLater(upstream, n.method);
      return;
    }
    if (n.method === 'notifications/resources/updated') this.#subscriptions.deliver(upstream, n);
    // A task's status goes to the session that created it (known here), with the id it knows.
    if (this.#passThrough.notification(upstream, n)) return;
    // Logging and other notifications of a shared worker belong to no one client: never broadcast.
  }
}
