import type { Logger } from 'pino';
import { GatewayError, UpstreamRpcError, errorResponse, toErrorObject } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { LOG_LEVELS, META, RESERVED_META_PREFIX } from '../jsonrpc/meta-keys.js';
import { isKnownMethod } from '../jsonrpc/params-schemas.js';
import { MODERN_VERSIONS, negotiateVersion } from '../jsonrpc/versions.js';
import type { AuditLog } from '../observability/audit.js';
import type { Metrics } from '../observability/metrics.js';
import type { PoolStatus, UpstreamPool } from '../upstream/pool.js';
import type { SessionWorkers } from '../upstream/session-workers.js';
import type { ClientIdentity, McpResult, PerSessionCallOptions, UpstreamCall, UpstreamPeer } from '../contracts/upstream.js';
import type { Bus } from '../cluster/bus.js';
import { ArgumentValidator } from './argument-validator.js';
import type { PerSessionRouter } from './per-session-router.js';
import { Catalog, LISTS, entriesOf, type ListKind, type Route, type UpstreamLists } from './catalog.js';
import { requestKey, type MessageSink, type RequestContext } from '../contracts/request-context.js';
import { InFlightTable, type Deadline } from './in-flight.js';
import { paginate } from './pagination.js';
import { INTERNALS, type VirtualServerInternals } from './internals.js';
import type { MirroredParam } from '../modern/mirrored-params.js';

interface EntryCommon {
  prefix: string;
  deadline: Deadline;
  /** Which of its tools (by their own names) the gateway offers; the rest do not exist for clients. */
  offersTool?: (name: string) => boolean;
  /** Whether tools/call arguments are checked against the tool's inputSchema (`upstreams[].validateArguments`). */
  validateArguments: boolean;
}

/** One configured upstream: a shared pool, or a worker per client session. */
export type UpstreamEntry = EntryCommon & ({ mode: 'shared'; pool: UpstreamPool } | { mode: 'per-session'; workers: SessionWorkers });

export function upstreamStatus(entry: UpstreamEntry): PoolStatus {
  return entry.mode === 'shared' ? entry.pool.status() : entry.workers.status();
}

export interface VirtualServerOptions {
  upstreams: Map<string, UpstreamEntry>;
  /** Calls on per-session workers, wherever their owner replica is. */
  perSession: PerSessionRouter;
  /** Carries cancellations to the replica that holds the request (no affinity between replicas). */
  bus: Bus;
  /** How the gateway introduces itself to a per-session upstream it probes for its lists. */
  probeIdentity: ClientIdentity;
  serverInfo: { name: string; version: string };
  pageSize: number;
  /** Cache hints on stateless (2026-07-28) results. */
  caching: { listTtlMs: number; readTtlMs: number };
  log: Logger;
  metrics: Metrics;
  /** One line per audited request, when `audit.methods` names any. */
  audit?: AuditLog | undefined;
}

/** What the transport needs from the virtual server: nothing about upstreams leaks through. */
export interface McpHandler {
  initialize(params: Record<string, unknown> | undefined): { protocolVersion: string; result: McpResult };
  /** What the virtual server offers; `stateless`: to 2026-07-28 clients. */
  capabilities(stateless: boolean): Record<string, unknown>;
  /** The arguments of a tool that a 2026-07-28 client mirrors into Mcp-Param-* headers. */
  mirroredParams(tool: string): readonly MirroredParam[];
  handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse>;
  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void;
  /** The client's answer to a request an upstream sent it. */
  handleResponse(ctx: RequestContext, response: JsonRpcResponse): void;
  /**
   * Resource updates for a stateless client's listen stream (`ctx.scope` is the stream's, and
   * `ctx` says who listens): the URIs it can follow, now subscribed upstream; updates go to
   * `sink` until the scope is released.
   */
  watchResources(ctx: RequestContext, uris: unknown, sink: MessageSink): string[];
  /** Ends everything in flight for a scope (a session was deleted or expired). */
  releaseScope(scope: string): void;
}

const MAX_LIST_PAGES = 100;

const CANCEL_CHANNEL = 'cancel';

/** A client's notifications/cancelled that reached a replica not holding the request. */
interface RemoteCancel {
  scope: string;
  id: string | number;
  message?: string;
}


// Maps, not object literals: a method named "constructor" or "__proto__" must find nothing.
const LIST_METHODS: ReadonlyMap<string, ListKind> = new Map([
  ['tools/list', 'tools'],
  ['prompts/list', 'prompts'],
  ['resources/list', 'resources'],
  ['resources/templates/list', 'resourceTemplates'],
]);

/** Stateless results that carry cache hints, and which TTL applies to each. */
const CACHEABLE: ReadonlyMap<string, 'list' | 'read'> = new Map([
  ['server/discover', 'list'],
  ['tools/list', 'list'],
  ['prompts/list', 'list'],
  ['resources/list', 'list'],
  ['resources/templates/list', 'list'],
  ['resources/read', 'read'],
]);

const NO_MIRRORED: readonly MirroredParam[] = [];

const OTHER_LABEL = '_other';

/** Shared by every retry without a progress token: nothing to allocate per call. */
const CONTINUATION: PerSessionCallOptions = Object.freeze({ continuation: true });

/** The one MCP server clients see, built from every upstream's catalog. */
export class VirtualServer implements McpHandler {
  #catalog = new Catalog([]);
  readonly #lists = new Map<string, UpstreamLists>();
  readonly #inFlight = new InFlightTable();
  /** `${upstream}\0${uri}` → the scopes subscribed to it through a shared upstream. */
  readonly #subscriptions = new Map<string, Map<string, MessageSink>>();
  readonly #listChangedListeners: Array<(method: string) => void> = [];
  /** Remote upstreams whose circuit is open: out of the catalog until they recover. */
  readonly #down = new Set<string>();
  #started = false;
  #unsubscribeCancels: (() => Promise<void>) | undefined;
  readonly #arguments: ArgumentValidator;

  constructor(private readonly options: VirtualServerOptions) {
    this.#arguments = new ArgumentValidator({ log: options.log, enabled: (upstream) => options.upstreams.get(upstream)?.validateArguments !== false });
  }

  get catalog(): Catalog {
    return this.#catalog;
  }

  /** For tests only (see internals.ts). */
  get [INTERNALS](): VirtualServerInternals {
    const { upstreams } = this.options;
    const inFlight = this.#inFlight;
    return {
      get inFlight() {
        return inFlight.size;
      },
      perSessionWorkers(upstream) {
        const entry = upstreams.get(upstream);
        return entry?.mode === 'per-session' ? entry.workers.size : 0;
      },
    };
  }

  /**
   * Starts every upstream pool and builds the catalog from the ones that came up. An upstream
   * that fails to start is retried in the background and joins the catalog when it does; a
   * name collision between upstreams is a start-up error, thrown as soon as it shows.
   */
  async start(): Promise<void> {
    const { upstreams, log } = this.options;
    await Promise.all(
      [...upstreams].map(async ([name, entry]) => {
        if (entry.mode === 'shared') {
          entry.pool.onInfo(() => {
            // An upstream that was down at start-up: add its lists once it is up.
            if (this.#started && !this.#lists.has(name)) this.#refreshLater(name);
          });
        }
        try {
          this.#lists.set(name, await this.#loadLists(name, entry));
        } catch (err) {
          log.error({ upstream: name, err: err instanceof Error ? err.message : String(err) }, 'upstream unavailable at start-up; retrying in the background');
          return;
        }
        // A collision ends start-up as soon as the second list is in, not after the slowest upstream.
        this.#catalog = new Catalog([...this.#lists.values()], this.#down);
      }),
    );
    this.#catalog = this.#buildCatalog(this.#lists);
    this.#unsubscribeCancels = await this.options.bus.subscribe(CANCEL_CHANNEL, (raw) => this.#onRemoteCancel(raw));
    this.#started = true;
  }

  initialize(params: Record<string, unknown> | undefined): { protocolVersion: string; result: McpResult } {
    const protocolVersion = negotiateVersion(params?.protocolVersion);
    const result: McpResult = { protocolVersion, capabilities: this.capabilities(false), serverInfo: this.options.serverInfo };
    const instructions = this.#instructions();
    if (instructions) result.instructions = instructions;
    return { protocolVersion, result };
  }

  capabilities(stateless: boolean): Record<string, unknown> {
    const capabilities: Record<string, unknown> = {};
    for (const [, info] of this.#upstreamInfos()) {
      // The gateway refreshes its catalog when an upstream's lists change, and tells clients.
      if (info.capabilities.tools !== undefined) capabilities.tools = { listChanged: true };
      if (info.capabilities.prompts !== undefined) capabilities.prompts = { listChanged: true };
      if (isObject(info.capabilities.resources)) {
        const resources = (capabilities.resources ?? { listChanged: true }) as Record<string, unknown>;
        // Stateless clients subscribe on a listen stream (see watchResources).
        if (info.capabilities.resources.subscribe === true) resources.subscribe = true;
        capabilities.resources = resources;
      }
      if (info.capabilities.completions !== undefined) capabilities.completions = {};
      // Stateless requests get no log messages (none asks with a log level the gateway honours).
      if (info.capabilities.logging !== undefined && !stateless) capabilities.logging = {};
    }
    return capabilities;
  }

  mirroredParams(tool: string): readonly MirroredParam[] {
    return this.#catalog.tool(tool)?.mirrored ?? NO_MIRRORED;
  }

  #instructions(): string | undefined {
    const parts: string[] = [];
    for (const [name, info] of this.#upstreamInfos()) if (info.instructions) parts.push(`[${name}] ${info.instructions}`);
    return parts.length > 0 ? parts.join('\n\n') : undefined;
  }

  /** Upstreams that are up, with what they said at initialize. */
  *#upstreamInfos(): Generator<[string, NonNullable<UpstreamPool['info']>]> {
    for (const [name, entry] of this.options.upstreams) {
      const info = entry.mode === 'shared' ? entry.pool.info : entry.workers.info;
      if (info) yield [name, info];
    }
  }

  async handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const started = performance.now();
    let tool = '';
    let errorType = '';
    let result: McpResult | undefined;
    try {
      if (request.method === 'tools/call' && typeof request.params?.name === 'string') tool = request.params.name;
      result = await this.#dispatch(ctx, request);
      return { jsonrpc: '2.0', id: request.id, result: ctx.stateless ? this.#statelessResult(ctx, request.method, result) : result };
    } catch (err) {
      const error = toErrorObject(err);
      errorType = err instanceof GatewayError ? err.type : errorCodeLabel(error.code);
      if (!(err instanceof GatewayError) && !(err instanceof UpstreamRpcError)) {
        this.options.log.error({ err, method: request.method }, 'unexpected error handling a request');
      }
      return errorResponse(request.id, error) as JsonRpcResponse;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.options.metrics.operationDuration.observe(
        // Label values a client chooses are bounded: unknown methods share one series.
        { mcp_method_name: isKnownMethod(request.method) ? request.method : OTHER_LABEL, gen_ai_tool_name: tool && this.#catalog.tool(tool) ? tool : '', error_type: errorType },
        seconds,
      );
      const audit = this.options.audit;
      if (audit?.covers(request.method)) {
        const params = request.params;
        const target = typeof params?.name === 'string' ? params.name : typeof params?.uri === 'string' ? params.uri : undefined;
        audit.record({
          method: request.method,
          target,
          principal: ctx.principal,
          session: ctx.stateless ? undefined : ctx.scope,
          stateless: ctx.stateless,
          outcome: errorType || 'ok',
          ...(result?.isError === true ? { toolError: true } : {}),
          durationMs: Math.round(seconds * 1e4) / 10,
        });
      }
    }
  }

  /**
   * A result as 2026-07-28 has it: `resultType`, the server's identity in `_meta`, and cache
   * hints on discover, lists and reads (public while every client sees the same catalog,
   * private once the tool list depends on the token's scopes; a read is the upstream's data,
   * so private).
   */
  #statelessResult(ctx: RequestContext, method: string, result: McpResult): McpResult {
    const meta = isObject(result._meta) ? { ...result._meta, [META.serverInfo]: this.options.serverInfo } : { [META.serverInfo]: this.options.serverInfo };
    const shaped: McpResult = { resultType: 'complete', ...result, _meta: meta };
    // An input-required result is the middle of a request, never to be cached.
    const cacheable = result.resultType === 'input_required' ? undefined : CACHEABLE.get(method);
    if (cacheable === 'list') Object.assign(shaped, { ttlMs: this.options.caching.listTtlMs, cacheScope: ctx.mayCall ? 'private' : 'public' });
    else if (cacheable === 'read') Object.assign(shaped, { ttlMs: this.options.caching.readTtlMs, cacheScope: 'private' });
    return shaped;
  }

  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/cancelled') {
      const id = notification.params?.requestId;
      if (typeof id !== 'string' && typeof id !== 'number') return;
      const reason = notification.params?.reason;
      const message = typeof reason === 'string' ? `Request cancelled: ${reason}` : undefined;
      if (!this.#inFlight.cancel(requestKey(ctx.scope, id), new GatewayError('REQUEST_CANCELLED', message))) {
        // Not here: the request may be in flight on another replica.
        const wire: RemoteCancel = { scope: ctx.scope, id, ...(message ? { message } : {}) };
        this.options.bus.publish(CANCEL_CHANNEL, JSON.stringify(wire)).catch(() => undefined);
      }
    }
    // notifications/initialized, roots/list_changed and the like need no action in shared mode.
  }

  handleResponse(ctx: RequestContext, response: JsonRpcResponse): void {
    if (!this.options.perSession.handleResponse(ctx.scope, response)) {
      this.options.log.debug({ id: response.id }, 'client answered a request nobody is waiting for');
    }
  }

  watchResources(ctx: RequestContext, uris: unknown, sink: MessageSink): string[] {
    if (!Array.isArray(uris)) return [];
    const watched: string[] = [];
    const refused = (upstream: string, uri: string) => (err: unknown) =>
      this.options.log.warn({ upstream, uri, err: err instanceof Error ? err.message : String(err) }, 'upstream refused a resource subscription');
    for (const uri of new Set(uris)) {
      if (typeof uri !== 'string') continue;
      const route = this.#catalog.resource(uri);
      const entry = route && this.options.upstreams.get(route.upstream);
      if (!route || !entry) continue;
      const info = entry.mode === 'shared' ? entry.pool.info : entry.workers.info;
      if (!isObject(info?.capabilities.resources) || info.capabilities.resources.subscribe !== true) continue;
      // Subscribing again is harmless upstream; a failure leaves the stream quiet for this URI.
      if (entry.mode === 'shared') {
        // A shared worker holds the subscription for everyone; the gateway remembers who listens.
        const key = `${route.upstream}\u0000${uri}`;
        const scopes = this.#subscriptions.get(key) ?? new Map<string, MessageSink>();
        this.#subscriptions.set(key, scopes.set(ctx.scope, sink));
        entry.pool.call('resources/subscribe', { uri }).promise.catch(refused(route.upstream, uri));
      } else {
        this.options.perSession.call(listenerContext(ctx, sink), route.upstream, 'resources/subscribe', { uri }, undefined, () => undefined).catch(refused(route.upstream, uri));
      }
      watched.push(uri);
    }
    return watched;
  }

  releaseScope(scope: string): void {
    this.#inFlight.cancelScope(scope, new GatewayError('REQUEST_CANCELLED', 'Session ended'));
    for (const scopes of this.#subscriptions.values()) scopes.delete(scope);
    this.options.perSession.release(scope);
  }

  #onRemoteCancel(raw: string): void {
    try {
      const wire = JSON.parse(raw) as RemoteCancel;
      this.#inFlight.cancel(requestKey(wire.scope, wire.id), new GatewayError('REQUEST_CANCELLED', wire.message));
    } catch {
      this.options.log.warn('unreadable cancellation on the bus');
    }
  }

  async close(): Promise<void> {
    await this.#unsubscribeCancels?.().catch(() => undefined);
    this.#inFlight.cancelAll(new GatewayError('SHUTTING_DOWN'));
    await this.options.perSession.close();
    await Promise.all([...this.options.upstreams.values()].map((u) => (u.mode === 'shared' ? u.pool.close() : undefined)));
  }

  /** The client side of a shared worker: nobody to ask, but its list changes still count. */
  sharedPeer(upstream: string): UpstreamPeer {
    return {
      request: async (method) => {
        // A shared worker serves many sessions: a request from it cannot be tied to one client.
        throw new GatewayError('METHOD_NOT_FOUND', `${method} is not available to a shared upstream worker (use mode: per-session)`);
      },
      notification: (n) => this.#onUpstreamNotification(upstream, n),
    };
  }

  /** Called with a list_changed method after the merged catalog changed. */
  onListChanged(listener: (method: string) => void): void {
    this.#listChangedListeners.push(listener);
  }

  /** A per-session upstream's lists changed. */
  listChanged(upstream: string, method: string): void {
    this.#refreshLater(upstream, method);
  }

  /**
   * A remote upstream went down (its tools, prompts and resources leave the catalog, and every
   * session hears list_changed) or came back (they are listed again, with list_changed).
   */
  setAvailable(upstream: string, available: boolean): void {
    if (available === !this.#down.has(upstream)) return;
    if (available) this.#down.delete(upstream);
    else this.#down.add(upstream);
    const lists = this.#lists.get(upstream);
    if (lists) {
      // Its routes stay: a call to one of its tools fails fast with the upstream's own error.
      this.#catalog = this.#buildCatalog(this.#lists);
      this.options.log.warn({ upstream }, available ? 'upstream back: its entries are listed again' : 'upstream down: its entries are no longer listed');
      const methods: string[] = [];
      if (lists.lists.tools?.length) methods.push('notifications/tools/list_changed');
      if (lists.lists.prompts?.length) methods.push('notifications/prompts/list_changed');
      if (lists.lists.resources?.length || lists.lists.resourceTemplates?.length) methods.push('notifications/resources/list_changed');
      for (const m of methods) for (const l of this.#listChangedListeners) l(m);
    }
    // It may come back with other lists (or, down at start-up, with its first ones).
    if (available) this.#refreshLater(upstream);
  }

  #onUpstreamNotification(upstream: string, n: JsonRpcNotification): void {
    if (n.method.endsWith('/list_changed') && n.method !== 'notifications/roots/list_changed') {
      this.#refreshLater(upstream, n.method);
      return;
    }
    if (n.method === 'notifications/resources/updated' && typeof n.params?.uri === 'string') {
      for (const sink of this.#subscriptions.get(`${upstream}\u0000${n.params.uri}`)?.values() ?? []) sink.send(n);
      return;
    }
    // Logging and other notifications of a shared worker belong to no one client: never broadcast.
  }

  async #dispatch(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const params = request.params;
    const catalog = this.#catalog;
    const listKind = LIST_METHODS.get(request.method);
    if (listKind) {
      const all = catalog.list(listKind);
      const mayCall = ctx.mayCall;
      const visible = listKind === 'tools' && mayCall ? all.filter((t) => mayCall(String(t.name))) : all;
      const { page, nextCursor } = paginate(visible, params?.cursor, this.options.pageSize);
      return nextCursor === undefined ? { [LISTS[listKind].field]: page } : { [LISTS[listKind].field]: page, nextCursor };
    }
    switch (request.method) {
      case 'ping':
        return {};
      case 'server/discover':
        if (!ctx.stateless) break;
        return this.#discover();
      case 'tools/call': {
        const route = catalog.tool(requireString(params, 'name'));
        // Before anything is taken (an id, a slot): an invalid call never reaches the upstream.
        route?.arguments?.check(params?.arguments);
        return this.#forwardNamed(ctx, request, route, 'Unknown tool');
      }
      case 'prompts/get':
        return this.#forwardNamed(ctx, request, catalog.prompt(requireString(params, 'name')), 'Unknown prompt');
      case 'resources/read': {
        const uri = requireString(params, 'uri');
        const route = catalog.resource(uri);
        if (!route) throw resourceNotFound(ctx, uri);
        return this.#forward(ctx, request, route.upstream, params);
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return this.#subscription(ctx, request);
      case 'logging/setLevel':
        return this.#setLevel(ctx, request);
      case 'completion/complete':
        return this.#complete(ctx, request);
      case 'initialize':
        throw new GatewayError('INVALID_REQUEST', 'Session is already initialized');
    }
    throw new GatewayError('METHOD_NOT_FOUND', `Method not found: ${request.method}`);
  }

  #discover(): McpResult {
    const result: McpResult = { supportedVersions: [...MODERN_VERSIONS], capabilities: this.capabilities(true) };
    const instructions = this.#instructions();
    if (instructions) result.instructions = instructions;
    return result;
  }

  async #subscription(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const uri = requireString(request.params, 'uri');
    const route = this.#catalog.resource(uri);
    if (!route) throw resourceNotFound(ctx, uri);
    const result = await this.#forward(ctx, request, route.upstream, request.params);
    // A shared worker's updates carry no session: the gateway remembers who subscribed.
    if (this.options.upstreams.get(route.upstream)?.mode === 'shared') {
      const key = `${route.upstream}\u0000${uri}`;
      if (request.method === 'resources/subscribe') {
        const sink = ctx.sessionSink;
        if (sink) {
          const scopes = this.#subscriptions.get(key) ?? new Map<string, MessageSink>();
          this.#subscriptions.set(key, scopes.set(ctx.scope, sink));
        }
      } else {
        this.#subscriptions.get(key)?.delete(ctx.scope);
      }
    }
    return result;
  }

  async #setLevel(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const level = requireString(request.params, 'level');
    if (!LOG_LEVELS.includes(level)) throw new GatewayError('INVALID_PARAMS', `Unknown log level: ${level}`);
    // Only a session's own workers take its level; a shared worker's level would be everyone's.
    const own = [...this.options.upstreams].filter(([, e]) => e.mode === 'per-session' && e.workers.workerOf(ctx.scope));
    await Promise.all(own.map(([name]) => this.#forward(ctx, { ...request, id: `${String(request.id)}:${name}` }, name, request.params)));
    return {};
  }

  #forwardNamed(ctx: RequestContext, request: JsonRpcRequest, route: Route | undefined, unknown: string): Promise<McpResult> {
    if (!route) throw new GatewayError('INVALID_PARAMS', `${unknown}: ${String(request.params?.name)}`);
    return this.#forward(ctx, request, route.upstream, { ...request.params, name: route.original });
  }

  #complete(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const ref = request.params?.ref;
    if (!isObject(ref)) throw new GatewayError('INVALID_PARAMS', 'completion/complete needs params.ref');
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
      const route = this.#catalog.prompt(ref.name);
      if (!route) throw new GatewayError('INVALID_PARAMS', `Unknown prompt: ${ref.name}`);
      return this.#forward(ctx, request, route.upstream, { ...request.params, ref: { ...ref, name: route.original } });
    }
    if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
      const route = this.#catalog.resource(ref.uri);
      if (!route) throw resourceNotFound(ctx, ref.uri);
      return this.#forward(ctx, request, route.upstream, request.params);
    }
    throw new GatewayError('INVALID_PARAMS', 'params.ref must be a ref/prompt with a name or a ref/resource with a uri');
  }

  async #forward(ctx: RequestContext, request: JsonRpcRequest, upstream: string, params: Record<string, unknown> | undefined): Promise<McpResult> {
    const entry = this.options.upstreams.get(upstream);
    if (!entry) throw new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${upstream} is not configured`);
    const key = requestKey(ctx.scope, request.id);
    if (this.#inFlight.has(key)) throw new GatewayError('INVALID_REQUEST', `Request id ${JSON.stringify(request.id)} is already in use`);
    let continuation = false;
    if (ctx.stateless) {
      if (request.params?.requestState !== undefined) {
        // Only a per-session call can be waiting for input; the retry continues it.
        if (entry.mode !== 'per-session') throw new GatewayError('INVALID_PARAMS', 'requestState is not valid: this request was never answered with input_required');
        // The params as sent (inputResponses, requestState, progressToken), names as the upstream has them.
        continuation = true;
      } else {
        params = upstreamParams(params);
      }
    }
    const tracked = this.#inFlight.begin(key, entry.deadline);
    const wantsProgress = isObject(params?._meta) && params._meta.progressToken !== undefined;
    const options: PerSessionCallOptions | undefined = wantsProgress
      ? {
          onNotification: (n) => {
            tracked.touch();
            ctx.sink.send(n);
          },
          continuation,
        }
      : continuation
        ? CONTINUATION
        : undefined;
    if (entry.mode === 'shared') {
      try {
        tracked.call = entry.pool.call(request.method, params, options);
        return await tracked.call.promise;
      } finally {
        this.#inFlight.end(key, tracked);
      }
    }
    try {
      return await this.options.perSession.call(ctx, upstream, request.method, params, options, (call) => {
        tracked.call = call;
      });
    } finally {
      this.#inFlight.end(key, tracked);
    }
  }

  /** A new catalog version; its tools keep the compiled argument checks of unchanged schemas. */
  #buildCatalog(lists: ReadonlyMap<string, UpstreamLists>): Catalog {
    const checks = this.#arguments.nextVersion();
    const catalog = new Catalog([...lists.values()], this.#down, checks);
    checks.commit();
    return catalog;
  }

  #refreshLater(name: string, method?: string): void {
    void this.#refresh(name, method).catch((err: unknown) =>
      this.options.log.error({ upstream: name, err: err instanceof Error ? err.message : String(err) }, 'catalog refresh failed'),
    );
  }

  /** Lists from a shared pool, or from a probe worker for a per-session upstream. */
  #loadLists(name: string, entry: UpstreamEntry): Promise<UpstreamLists> {
    if (entry.mode === 'shared') {
      return entry.pool.start().then(() => this.#fetchLists(name, entry.prefix, (m, p) => entry.pool.call(m, p)));
    }
    return entry.workers.probe(this.options.probeIdentity, (probe) => this.#fetchLists(name, entry.prefix, (m, p) => probe.call(m, p)));
  }

  async #fetchLists(
    name: string,
    prefix: string,
    call: (method: string, params: Record<string, unknown> | undefined) => UpstreamCall,
  ): Promise<UpstreamLists> {
    const entry = this.options.upstreams.get(name)!;
    const info = entry.mode === 'shared' ? entry.pool.info : entry.workers.info;
    const lists: UpstreamLists['lists'] = {};
    for (const kind of Object.keys(LISTS) as ListKind[]) {
      const spec = LISTS[kind];
      if (!info || info.capabilities[spec.capability] === undefined) continue;
      const all: Array<Record<string, unknown>> = [];
      let cursor: unknown;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await call(spec.method, cursor === undefined ? undefined : { cursor }).promise;
        all.push(...entriesOf(kind, result));
        cursor = result.nextCursor;
        if (typeof cursor !== 'string' || cursor === '') break;
      }
      lists[kind] = kind === 'tools' && entry.offersTool ? all.filter((t) => typeof t.name === 'string' && entry.offersTool!(t.name)) : all;
    }
    return { name, prefix, lists };
  }

  async #refresh(name: string, method?: string): Promise<void> {
    const entry = this.options.upstreams.get(name);
    if (!entry) return;
    const lists = await this.#loadLists(name, entry);
    const next = new Map(this.#lists).set(name, lists);
    try {
      this.#catalog = this.#buildCatalog(next);
      this.#lists.set(name, lists);
      this.options.log.info({ upstream: name }, 'catalog refreshed');
      const methods = method ? [method] : ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed'];
      for (const m of methods) for (const l of this.#listChangedListeners) l(m);
    } catch (err) {
      this.options.log.error({ upstream: name, err: (err as Error).message }, 'upstream left out of the catalog');
    }
  }
}

/** An upstream's own error code as a label: JSON-RPC's reserved range by number, anything else as one value. */
function errorCodeLabel(code: number): string {
  return Number.isInteger(code) && code >= -32768 && code <= -32000 ? String(code) : OTHER_LABEL;
}

function requireString(params: Record<string, unknown> | undefined, key: string): string {
  const v = params?.[key];
  if (typeof v !== 'string') throw new GatewayError('INVALID_PARAMS', `params.${key} must be a string`);
  return v;
}

function resourceNotFound(ctx: RequestContext, uri: string): GatewayError {
  return new GatewayError(ctx.stateless ? 'MODERN_RESOURCE_NOT_FOUND' : 'RESOURCE_NOT_FOUND', `Resource not found: ${uri}`, { uri });
}

/**
 * A stateless request's params as a 2025 upstream may see them: without the `_meta` fields that
 * describe the client's request to the gateway (its version, capabilities, identity) and
 * without input-required round trip fields, which the gateway never asked for.
 */
function upstreamParams(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params) return params;
  const { _meta: meta, inputResponses: _responses, requestState: _state, ...rest } = params;
  if (!isObject(meta)) return rest;
  // Keys are the client's: on a plain object "__proto__" would set the prototype, not a key.
  const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(meta)) if (!k.startsWith(RESERVED_META_PREFIX)) kept[k] = v;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}

/**
 * A listen stream as the session of its own per-session worker: the worker lives until the stream
 * closes (its scope is released), and only resource updates travel back. It is offered no client
 * capabilities: nobody could answer a request on a listen stream.
 */
function listenerContext(ctx: RequestContext, sink: MessageSink): RequestContext {
  const updates: MessageSink = {
    send: (m) => 'method' in m && !('id' in m) && m.method === 'notifications/resources/updated' && sink.send(m),
  };
  return { ...ctx, stateless: false, clientCapabilities: {}, sink: updates, sessionSink: updates };
}
