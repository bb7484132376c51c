import type { Logger } from 'pino';
import { GatewayError, UpstreamRpcError, errorResponse, toErrorObject } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { negotiateVersion } from '../jsonrpc/versions.js';
import type { Metrics } from '../observability/metrics.js';
import type { UpstreamPool } from '../upstream/pool.js';
import type { McpResult } from '../upstream/upstream.js';
import { Catalog, LISTS, entriesOf, type ListKind, type Route, type UpstreamLists } from './catalog.js';
import { requestKey, type RequestContext } from './context.js';
import { InFlightTable, type Deadline } from './in-flight.js';
import { paginate } from './pagination.js';

export interface UpstreamEntry {
  pool: UpstreamPool;
  prefix: string;
  deadline: Deadline;
}

export interface VirtualServerOptions {
  upstreams: Map<string, UpstreamEntry>;
  serverInfo: { name: string; version: string };
  pageSize: number;
  log: Logger;
  metrics: Metrics;
}

/** What the transport needs from the virtual server: nothing about upstreams leaks through. */
export interface McpHandler {
  initialize(params: Record<string, unknown> | undefined): { protocolVersion: string; result: McpResult };
  handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse>;
  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void;
  /** Ends everything in flight for a scope (a session was deleted or expired). */
  releaseScope(scope: string): void;
}

const MAX_LIST_PAGES = 100;

const LIST_METHODS: Record<string, ListKind> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
};

/** The one MCP server clients see, built from every upstream's catalog. */
export class VirtualServer implements McpHandler {
  #catalog = new Catalog([]);
  readonly #lists = new Map<string, UpstreamLists>();
  readonly #inFlight = new InFlightTable();
  #started = false;

  constructor(private readonly options: VirtualServerOptions) {}

  get catalog(): Catalog {
    return this.#catalog;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Starts every upstream pool and builds the catalog from the ones that came up. An upstream
   * that fails to start is retried in the background and joins the catalog when it does; a
   * name collision between upstreams is a start-up error.
   */
  async start(): Promise<void> {
    const { upstreams, log } = this.options;
    await Promise.all(
      [...upstreams].map(async ([name, entry]) => {
        entry.pool.onInfo(() => {
          // An upstream that was down at start-up: add its lists once it is up.
          if (this.#started && !this.#lists.has(name)) void this.#refresh(name).catch((err: unknown) => log.error({ upstream: name, err: String(err) }, 'catalog refresh failed'));
        });
        try {
          await entry.pool.start();
          this.#lists.set(name, await this.#fetchLists(name, entry));
        } catch (err) {
          log.error({ upstream: name, err: err instanceof Error ? err.message : String(err) }, 'upstream unavailable at start-up; retrying in the background');
        }
      }),
    );
    this.#catalog = new Catalog([...this.#lists.values()]);
    this.#started = true;
  }

  initialize(params: Record<string, unknown> | undefined): { protocolVersion: string; result: McpResult } {
    const protocolVersion = negotiateVersion(params?.protocolVersion);
    const capabilities: Record<string, unknown> = {};
    const instructions: string[] = [];
    for (const [name, { pool }] of this.options.upstreams) {
      const info = pool.info;
      if (!info) continue;
      for (const cap of ['tools', 'prompts', 'resources', 'completions'] as const) {
        if (info.capabilities[cap] !== undefined) capabilities[cap] = {};
      }
      if (info.instructions) instructions.push(`[${name}] ${info.instructions}`);
    }
    const result: McpResult = { protocolVersion, capabilities, serverInfo: this.options.serverInfo };
    if (instructions.length > 0) result.instructions = instructions.join('\n\n');
    return { protocolVersion, result };
  }

  async handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const started = performance.now();
    let tool = '';
    let errorType = '';
    try {
      if (request.method === 'tools/call' && typeof request.params?.name === 'string') tool = request.params.name;
      const result = await this.#dispatch(ctx, request);
      return { jsonrpc: '2.0', id: request.id, result };
    } catch (err) {
      const error = toErrorObject(err);
      errorType = err instanceof GatewayError ? err.type : String(error.code);
      if (!(err instanceof GatewayError) && !(err instanceof UpstreamRpcError)) {
        this.options.log.error({ err, method: request.method }, 'unexpected error handling a request');
      }
      return errorResponse(request.id, error) as JsonRpcResponse;
    } finally {
      this.options.metrics.operationDuration.observe(
        { mcp_method_name: request.method, gen_ai_tool_name: tool && this.#catalog.tool(tool) ? tool : '', error_type: errorType },
        (performance.now() - started) / 1000,
      );
    }
  }

  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void {
    if (notification.method === 'notifications/cancelled') {
      const id = notification.params?.requestId;
      if (typeof id !== 'string' && typeof id !== 'number') return;
      const reason = notification.params?.reason;
      this.#inFlight.cancel(requestKey(ctx.scope, id), new GatewayError('REQUEST_CANCELLED', typeof reason === 'string' ? `Request cancelled: ${reason}` : undefined));
    }
    // notifications/initialized, roots/list_changed and the like need no action in shared mode.
  }

  releaseScope(scope: string): void {
    this.#inFlight.cancelScope(scope, new GatewayError('REQUEST_CANCELLED', 'Session ended'));
  }

  async close(): Promise<void> {
    this.#inFlight.cancelAll(new GatewayError('SHUTTING_DOWN'));
    await Promise.all([...this.options.upstreams.values()].map((u) => u.pool.close()));
  }

  async #dispatch(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const params = request.params;
    const listKind = LIST_METHODS[request.method];
    if (listKind) {
      const { page, nextCursor } = paginate(this.#catalog.list(listKind), params?.cursor, this.options.pageSize);
      return nextCursor === undefined ? { [LISTS[listKind].field]: page } : { [LISTS[listKind].field]: page, nextCursor };
    }
    switch (request.method) {
      case 'ping':
        return {};
      case 'tools/call':
        return this.#forwardNamed(ctx, request, this.#catalog.tool(requireString(params, 'name')), 'Unknown tool');
      case 'prompts/get':
        return this.#forwardNamed(ctx, request, this.#catalog.prompt(requireString(params, 'name')), 'Unknown prompt');
      case 'resources/read': {
        const uri = requireString(params, 'uri');
        const route = this.#catalog.resource(uri);
        if (!route) throw new GatewayError('RESOURCE_NOT_FOUND', `Resource not found: ${uri}`, { uri });
        return this.#forward(ctx, request, route.upstream, params);
      }
      case 'completion/complete':
        return this.#complete(ctx, request);
      case 'initialize':
        throw new GatewayError('INVALID_REQUEST', 'Session is already initialized');
      default:
        throw new GatewayError('METHOD_NOT_FOUND', `Method not found: ${request.method}`);
    }
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
      if (!route) throw new GatewayError('RESOURCE_NOT_FOUND', `Resource not found: ${ref.uri}`, { uri: ref.uri });
      return this.#forward(ctx, request, route.upstream, request.params);
    }
    throw new GatewayError('INVALID_PARAMS', 'params.ref must be a ref/prompt with a name or a ref/resource with a uri');
  }

  async #forward(ctx: RequestContext, request: JsonRpcRequest, upstream: string, params: Record<string, unknown> | undefined): Promise<McpResult> {
    const entry = this.options.upstreams.get(upstream);
    if (!entry) throw new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${upstream} is not configured`);
    const key = requestKey(ctx.scope, request.id);
    if (this.#inFlight.has(key)) throw new GatewayError('INVALID_REQUEST', `Request id ${JSON.stringify(request.id)} is already in use`);
    const tracked = this.#inFlight.begin(key, entry.deadline);
    try {
      const wantsProgress = isObject(params?._meta) && params._meta.progressToken !== undefined;
      tracked.call = entry.pool.call(
        request.method,
        params,
        wantsProgress
          ? {
              onNotification: (n) => {
                tracked.touch();
                ctx.sink.send(n);
              },
            }
          : undefined,
      );
      return await tracked.call.promise;
    } finally {
      this.#inFlight.end(key, tracked);
    }
  }

  async #fetchLists(name: string, entry: UpstreamEntry): Promise<UpstreamLists> {
    const info = entry.pool.info;
    const lists: UpstreamLists['lists'] = {};
    for (const kind of Object.keys(LISTS) as ListKind[]) {
      const spec = LISTS[kind];
      if (!info || info.capabilities[spec.capability] === undefined) continue;
      const all: Array<Record<string, unknown>> = [];
      let cursor: unknown;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await entry.pool.call(spec.method, cursor === undefined ? undefined : { cursor }).promise;
        all.push(...entriesOf(kind, result));
        cursor = result.nextCursor;
        if (typeof cursor !== 'string' || cursor === '') break;
      }
      lists[kind] = all;
    }
    return { name, prefix: entry.prefix, lists };
  }

  async #refresh(name: string): Promise<void> {
    const entry = this.options.upstreams.get(name);
    if (!entry) return;
    const lists = await this.#fetchLists(name, entry);
    const next = new Map(this.#lists).set(name, lists);
    try {
      this.#catalog = new Catalog([...next.values()]);
      this.#lists.set(name, lists);
      this.options.log.info({ upstream: name }, 'upstream joined the catalog');
    } catch (err) {
      this.options.log.error({ upstream: name, err: (err as Error).message }, 'upstream left out of the catalog');
    }
  }
}

function requireString(params: Record<string, unknown> | undefined, key: string): string {
  const v = params?.[key];
  if (typeof v !== 'string') throw new GatewayError('INVALID_PARAMS', `params.${key} must be a string`);
  return v;
}
