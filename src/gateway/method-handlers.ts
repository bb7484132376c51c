// The table of method handlers: each method a client may send, by name, to the one function that
// answers it with the catalog the request reads (request-chain.ts finds it). A method the table
// lacks is not found, in the request's era's words.
import { openUserWorkers } from './user-workers.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import { LOG_LEVELS } from '../jsonrpc/meta-keys.js';
import { LIST_METHODS, type ListKind } from '../jsonrpc/list-methods.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import type { Capabilities } from './capabilities.js';
import { LISTS, type Catalog, type Route } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import type { Forwarder } from './forwarder.js';
import { paginate } from './pagination.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { RequestEvents } from './request-events.js';
import type { ResultStep } from './request-chain.js';
import { completionTarget, requireString, resourceNotFound } from './request-params.js';
import { isSkillUri, type ResourceUris } from './resource-uris.js';
import type { ServerView } from './server-views.js';
import type { SessionCatalogs } from './session-catalogs.js';
import { SkillMethods } from './skills.js';
import type { Subscriptions } from './subscriptions.js';
import type { UpstreamEntry } from './upstream-entry.js';
import type { TaskEngine } from '../tasks/engine.js';
import type { TaskPassThrough } from '../tasks/pass-through.js';
import { TASK_METHODS_2025, TASK_METHODS_2026 } from '../tasks/shapes.js';

/** A method's handler: a step of the request chain, the last. It may throw rather than reject. */
export type MethodHandler = ResultStep;

export interface MethodHandlerParts {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  perSession: PerSessionRouter;
  catalogs: CatalogManager;
  capabilities: Capabilities;
  subscriptions: Subscriptions;
  uris: ResourceUris;
  pageSize: number;
  passThrough: TaskPassThrough;
  tasks: TaskEngine | undefined;
  forwarder: Forwarder;
  sessionCatalogs: SessionCatalogs;
  events: RequestEvents;
}

export class MethodHandlers {
  // A Map, not an object literal: a method named "constructor" or "__proto__" must find nothing.
  readonly #table = new Map<string, MethodHandler>();
  readonly #parts: MethodHandlerParts;
  readonly #skills: SkillMethods;
  /** The table's one lookup: the handler of the request's method, or not found. */
  readonly handle: MethodHandler;

  constructor(parts: MethodHandlerParts) {
    this.#parts = parts;
    const table = this.#table;
    for (const [method, kind] of LIST_METHODS)
      table.set(method, (ctx, request, view, catalog) => this.#list(ctx, request, view, catalog, kind));
    table.set('ping', async () => ({}));
    table.set('server/discover', async (ctx, request) => {
      if (!ctx.stateless) throw notFound(ctx, request);
      return parts.capabilities.discover();
    });
    table.set('tools/call', (ctx, request, _view, catalog) => this.#callTool(ctx, request, catalog));
    table.set('prompts/get', (ctx, request, _view, catalog) =>
      parts.forwarder.forwardNamed(
        ctx,
        request,
        catalog.prompt(requireString(request.params, 'name')),
        'Unknown prompt',
        catalog,
      ),
    );
    this.#skills = new SkillMethods(parts);
    for (const [method, handler] of this.#skills.handlers()) table.set(method, handler);
    table.set('resources/read', (ctx, request, view, catalog) => this.#read(ctx, request, view, catalog));
    const subscription: MethodHandler = (ctx, request, _view, catalog) => this.#subscription(ctx, request, catalog);
    table.set('resources/subscribe', subscription);
    table.set('resources/unsubscribe', subscription);
    table.set('logging/setLevel', (ctx, request) => this.#setLevel(ctx, request));
    table.set('completion/complete', (ctx, request, _view, catalog) => {
      const { upstream, params } = completionTarget(ctx, request.params, catalog);
      return parts.forwarder.forward(ctx, request, upstream, params);
    });
    table.set('initialize', async () => {
      throw new GatewayError('INVALID_REQUEST', 'Session is already initialized');
    });
    const task: MethodHandler = (ctx, request) => this.#task(ctx, request);
    for (const method of [...TASK_METHODS_2025, ...TASK_METHODS_2026]) table.set(method, task);
    this.handle = (ctx, request, view, catalog) =>
      (this.#table.get(request.method) ?? methodNotFound)(ctx, request, view, catalog);
  }

  async #list(
    ctx: RequestContext,
    request: JsonRpcRequest,
    view: ServerView | undefined,
    catalog: Catalog,
    kind: ListKind,
  ): Promise<McpResult> {
    const parts = this.#parts;
    if (await openUserWorkers(ctx, parts))
      return this.#list(ctx, request, view, await parts.sessionCatalogs.catalogFor(ctx), kind);
    const all = view ? view.list(catalog, kind) : catalog.list(kind);
    const mayCall = ctx.mayCall;
    const visible = kind === 'tools' && mayCall ? all.filter((t) => mayCall(String(t.name))) : all;
    let { page, nextCursor } = paginate(visible, request.params?.cursor, parts.pageSize);
    if (kind === 'tools') page = parts.passThrough.decorate(ctx, page, (name) => catalog.tool(name), parts.tasks);
    return nextCursor === undefined ? { [LISTS[kind].field]: page } : { [LISTS[kind].field]: page, nextCursor };
  }

  /** Without tasks in play, the forwarder's promise itself: the plain call takes no turn of its own here. */
  #callTool(ctx: RequestContext, request: JsonRpcRequest, catalog: Catalog): Promise<McpResult> {
    const params = request.params;
    const route = catalog.tool(requireString(params, 'name'));
    // A withheld definition is refused before a task is made of its call (forwardNamed says why).
    if (route?.refused) return this.#forwardCall(ctx, request, route, catalog);
    // Before anything is taken (an id, a slot): an invalid call never reaches the upstream.
    route?.arguments?.check(params?.arguments);
    // An upstream that runs tasks itself gets the client's opt-in, and its task id leaves wrapped.
    if (this.#parts.passThrough.takes(ctx, route, this.#parts.tasks))
      return this.#passedThrough(ctx, request, route, catalog);
    const tasks = this.#parts.tasks;
    if (route && tasks) return this.#maybeTask(ctx, request, route, catalog, tasks);
    return this.#forwardCall(ctx, request, route, catalog);
  }

  async #passedThrough(ctx: RequestContext, request: JsonRpcRequest, route: Route, catalog: Catalog) {
    const { passThrough, forwarder } = this.#parts;
    return passThrough.created(
      ctx,
      route.upstream,
      await forwarder.forwardNamed(ctx, request, route, 'Unknown tool', catalog),
    );
  }

  async #maybeTask(
    ctx: RequestContext,
    request: JsonRpcRequest,
    route: Route,
    catalog: Catalog,
    tasks: TaskEngine,
  ): Promise<McpResult> {
    const task = await tasks.intercept(ctx, request, route);
    if (task) return task;
    // Awaited, not returned: an async function resolved with a promise takes two more microtask turns.
    return await this.#forwardCall(ctx, request, route, catalog);
  }

  #forwardCall(
    ctx: RequestContext,
    request: JsonRpcRequest,
    route: Route | undefined,
    catalog: Catalog,
  ): Promise<McpResult> {
    const params = request.params;
    // A task hint the gateway did not act on is not the upstream's business.
    if (params && 'task' in params) request = { ...request, params: { ...params, task: undefined } };
    return this.#parts.forwarder.forwardNamed(ctx, request, route, 'Unknown tool', catalog);
  }

  async #read(ctx: RequestContext, request: JsonRpcRequest, view: ServerView | undefined, catalog: Catalog) {
    const params = request.params;
    const uri = requireString(params, 'uri');
    if (isSkillUri(uri)) {
      if (this.#skills.serves(catalog.resource(uri)?.upstream)) return this.#skills.read(ctx, request, view);
      // Not a skills upstream's: a skill:// resource is an ordinary one, selected as resources are.
      if (view && !view.selectsResource(uri)) throw resourceNotFound(ctx, uri);
    }
    const route = catalog.resource(uri);
    if (!route) throw resourceNotFound(ctx, uri);
    const result = await this.#parts.forwarder.forward(
      ctx,
      request,
      route.upstream,
      route.original === uri ? params : { ...params, uri: route.original },
    );
    return this.#parts.uris.result(route.upstream, request.method, result);
  }

  async #subscription(ctx: RequestContext, request: JsonRpcRequest, catalog: Catalog): Promise<McpResult> {
    const uri = requireString(request.params, 'uri');
    const route = catalog.resource(uri);
    if (!route) throw resourceNotFound(ctx, uri);
    const result = await this.#parts.forwarder.forward(ctx, request, route.upstream, {
      ...request.params,
      uri: route.original,
    });
    // Updates name the upstream's own URI: they are told apart by that, and leave with the client's.
    this.#parts.subscriptions.record(ctx, request.method, route.upstream, route.original);
    return result;
  }

  async #setLevel(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const level = requireString(request.params, 'level');
    if (!LOG_LEVELS.includes(level)) throw new GatewayError('INVALID_PARAMS', `Unknown log level: ${level}`);
    // Kept with the session: its calls to 2026-07-28 upstreams (no session there) ask for it.
    await ctx.setLogLevel?.(level);
    // Only a session's own workers take its level; a shared worker's level would be everyone's.
    const own = [...this.#parts.upstreams].filter(([, e]) => e.workers.workerOf(ctx.scope));
    await Promise.all(
      own.map(([name]) =>
        this.#parts.forwarder.forward(
          ctx,
          this.#parts.events.derive(request, { ...request, id: `${String(request.id)}:${name}` }),
          name,
          request.params,
        ),
      ),
    );
    return {};
  }

  /** tasks/*: an upstream's own task (a wrapped id) goes to it; the gateway's to its task engine. */
  async #task(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const { passThrough, tasks, forwarder } = this.#parts;
    const params = request.params;
    if (passThrough.owns(ctx, request.method, params?.taskId, tasks))
      return passThrough.handle(ctx, request.method, params ?? {}, (upstream, p) =>
        forwarder.forward(ctx, request, upstream, p),
      );
    if (tasks) return tasks.handle(ctx, request);
    // A stateless request gets here only for a method of an extension this gateway does not run (tasks/*).
    throw notFound(ctx, request);
  }
}

const methodNotFound: MethodHandler = async (ctx, request) => {
  throw notFound(ctx, request);
};

function notFound(ctx: RequestContext, request: JsonRpcRequest): GatewayError {
  return new GatewayError(
    ctx.stateless ? 'MODERN_METHOD_NOT_FOUND' : 'METHOD_NOT_FOUND',
    `Method not found: ${request.method}`,
  );
}
