// Tool search on an endpoint (config `toolSearch`): a wrapper of the request chain between the
// catalog and the virtual server's view, so it sees the endpoint's own names. With search on,
// tools/list answers the pinned tools and search_tools and call_tool; search_tools is answered
// here, from the endpoint's index (tool-search/index-cache.ts); call_tool becomes the tools/call
// it names and enters the chain again from the catalog on (`reenter`), so the call is checked,
// scoped, rewritten, run (tasks, progress, cancellation: same id and _meta) and counted, audited
// and traced once, under the real tool's name, as a direct call is. Off, a request costs two
// comparisons here and no turn.
import type { ToolSearchConfig } from '../config/schema.js';
import { globPattern } from '../config/servers.js';
import type { Glob } from '../config/tool-filter.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { searchable, type IndexOrigin, type SearchableTool } from '../tool-search/ranker.js';
import { sharedToolRanker } from '../tool-search/search-thread.js';
import type { IndexShare } from '../tool-search/index-share.js';
import { ToolIndexes } from '../tool-search/index-cache.js';
import { remember } from '../tool-search/found-tools.js';
import type { TaskEngine } from '../tasks/engine.js';
import type { TaskPassThrough } from '../tasks/pass-through.js';
import type { Catalog } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { SessionCatalogs } from './session-catalogs.js';
import type { UpstreamEntry } from './upstream-entry.js';
import { openUserWorkers } from './user-workers.js';
import { paginate } from './pagination.js';
import type { Reenter, ResultStep, Wrapper } from './request-chain.js';
import type { ServerView } from './server-views.js';
import {
  CALL_TOOL,
  SEARCH_TOOL,
  callArguments,
  gatewayTools,
  searchArguments,
  searchDescription,
} from './tool-search-tools.js';

type Entry = Record<string, unknown>;

export interface ToolSearchParts {
  /**
   * The main path's `toolSearch` (servers[] have their own, in their view's config): read per
   * request, as a reload replaces it (gateway-parts.ts).
   */
  main: { readonly config: ToolSearchConfig | undefined } | undefined;
  /** The main path, as the metrics' endpoint label. */
  mainPath: string;
  diagnostics: DataPathEvents;
  pageSize: number;
  /** What a tools/list does besides, as the method table's does: user workers opened, task support shown. */
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  perSession: PerSessionRouter;
  catalogs: CatalogManager;
  sessionCatalogs: SessionCatalogs;
  passThrough: TaskPassThrough;
  tasks: TaskEngine | undefined;
  /** Where large indexes are kept for the other replicas; none: this process builds its own. */
  indexShare?: IndexShare;
}

interface Endpoint {
  config: ToolSearchConfig;
  label: string;
}

/** The chain's tool search wrapper; `reenter` runs what a request becomes from the catalog on. */
export function toolSearchStep(parts: ToolSearchParts, reenter: Reenter): Wrapper<ResultStep> {
  const search = new ToolSearch(parts, reenter);
  return (next) => (ctx, request, view, catalog) => {
    const method = request.method;
    if (method !== 'tools/call' && method !== 'tools/list') return next(ctx, request, view, catalog);
    const config = view ? view.config.toolSearch : parts.main?.config;
    if (!config?.enabled) return next(ctx, request, view, catalog);
    const endpoint = { config, label: view ? view.path : parts.mainPath };
    if (method === 'tools/list') return search.list(ctx, request, view, catalog, endpoint);
    const name = request.params?.name;
    if (name === SEARCH_TOOL) return search.search(ctx, request, view, catalog, endpoint);
    if (name === CALL_TOOL) return search.call(ctx, request, view, catalog, endpoint);
    return next(ctx, request, view, catalog);
  };
}

class ToolSearch {
  /** The indexes of the catalog every session shares (kept for the other replicas, given an indexShare). */
  readonly #indexes: ToolIndexes;
  /**
   * The indexes of a session's own catalog (upstreams that list per user): never kept in Redis,
   * where one per user of a few megabytes each would pile up and serve no other user.
   */
  readonly #ownIndexes: ToolIndexes;
  // search_tools' description of one list version, per endpoint config: computed once per version.
  readonly #compiled = new WeakMap<ToolSearchConfig, Glob[]>();
  readonly #summaries = new WeakMap<ReadonlyArray<Entry>, Map<ToolSearchConfig, string>>();
  readonly #byName = new WeakMap<ReadonlyArray<Entry>, Map<string, Entry>>();

  constructor(
    private readonly parts: ToolSearchParts,
    private readonly reenter: Reenter,
  ) {
    const made = (origin: IndexOrigin) => parts.diagnostics.emit('tool-search:index', { origin });
    this.#indexes = new ToolIndexes(sharedToolRanker(parts.indexShare), made);
    this.#ownIndexes = new ToolIndexes(sharedToolRanker(undefined), made);
  }

  #indexesOf(catalog: Catalog): ToolIndexes {
    return this.parts.sessionCatalogs.isOwn(catalog) ? this.#ownIndexes : this.#indexes;
  }

  async list(
    ctx: RequestContext,
    request: JsonRpcRequest,
    view: ServerView | undefined,
    catalog: Catalog,
    { config }: Endpoint,
  ): Promise<McpResult> {
    const parts = this.parts;
    if (await openUserWorkers(ctx, parts)) catalog = await parts.sessionCatalogs.catalogFor(ctx);
    const all = tools(view, catalog);
    this.#indexesOf(catalog).warm(all, describer(view, catalog));
    const pins = this.#pins(config);
    const mayCall = ctx.mayCall;
    const isPinned = (name: string) => pins.some((p) => p.test(name));
    const pinned = all.filter((t) => {
      const name = String(t.name);
      return isPinned(name) && (!mayCall || mayCall(name));
    });
    // A session's found tools follow its pinned ones; a reload may have taken some away, new scopes others.
    const found = exposes(config)
      ? this.#found(ctx, all, (name) => !isPinned(name) && (!mayCall || mayCall(name)))
      : [];
    const shown = parts.passThrough.decorate(ctx, [...pinned, ...found], (name) => catalog.tool(name), parts.tasks);
    const listed = [...gatewayTools(this.#summary(all, view, catalog, config), config), ...shown];
    const { page, nextCursor } = paginate(listed, request.params?.cursor, parts.pageSize);
    return nextCursor === undefined ? { tools: page } : { tools: page, nextCursor };
  }

  async search(
    ctx: RequestContext,
    request: JsonRpcRequest,
    view: ServerView | undefined,
    catalog: Catalog,
    { config, label }: Endpoint,
  ): Promise<McpResult> {
    const { query, limit } = searchArguments(request.params?.arguments, config);
    // A search stands in for the list: an upstream that lists only per user is opened as there.
    if (await openUserWorkers(ctx, this.parts)) catalog = await this.parts.sessionCatalogs.catalogFor(ctx);
    const all = tools(view, catalog);
    const indexes = this.#indexesOf(catalog);
    const index = await indexes.index(all, describer(view, catalog));
    const mayCall = ctx.mayCall;
    // The caller's scopes filter after ranking: the index is shared, what one caller may call is not.
    const ranked = await index.ranker.search(query, mayCall ? all.length : limit).catch((err: unknown) => {
      // A ranker that failed (its thread lost) is built again by the next search.
      indexes.forget(all);
      throw err;
    });
    const found: Entry[] = [];
    for (const name of ranked) {
      if (found.length === limit) break;
      if (mayCall && !mayCall(name)) continue;
      const entry = index.byName.get(name);
      if (entry) found.push(shown(entry));
    }
    this.parts.diagnostics.emit('tool-search:search', { endpoint: label, outcome: found.length > 0 ? 'hit' : 'empty' });
    // A pinned tool is listed anyway: it takes no place of the bound.
    const pins = this.#pins(config);
    const names = found.map((t) => String(t.name)).filter((n) => !pins.some((p) => p.test(n)));
    await expose(ctx, config, names);
    const text =
      found.length > 0
        ? JSON.stringify(found, null, 1)
        : `No tool matches "${query}". Try other words for the task, or fewer of them.`;
    return { content: [{ type: 'text', text }], structuredContent: { tools: found } };
  }

  async call(
    ctx: RequestContext,
    request: JsonRpcRequest,
    view: ServerView | undefined,
    catalog: Catalog,
    { config, label }: Endpoint,
  ): Promise<McpResult> {
    const params = request.params ?? {};
    const target = callArguments(params.arguments);
    // The transports check a direct call's tool scopes before the dispatcher sees it (a 403 with a
    // challenge); they saw only call_tool here. A tool this endpoint lacks fails below as unknown.
    if (ctx.mayCall && !ctx.mayCall(target.name) && offers(view, catalog, target.name))
      throw new GatewayError('INSUFFICIENT_SCOPE', `Forbidden: calling ${target.name} needs a scope the token lacks`);
    this.parts.diagnostics.emit('tool-search:call', { endpoint: label });
    // Same id, _meta (progress token) and task hint: cancelling or following call_tool's request follows the call.
    const { arguments: _outer, ...rest } = params;
    const call: JsonRpcRequest = {
      ...request,
      params: {
        ...rest,
        name: target.name,
        ...(target.arguments === undefined ? {} : { arguments: target.arguments }),
      },
    };
    const skip = this.#pins(config).some((p) => p.test(target.name)) || !offers(view, catalog, target.name);
    const exposed = skip ? undefined : expose(ctx, config, [target.name]);
    if (!exposed) return this.reenter(ctx, request, call, view);
    // The call does not wait for the session's record; its answer waits for both.
    const [result] = await Promise.all([this.reenter(ctx, request, call, view), exposed]);
    return result;
  }

  /** The session's found tools that `all` still holds and `shows` lets through, in the order found. */
  #found(ctx: RequestContext, all: ReadonlyArray<Entry>, shows: (name: string) => boolean): Entry[] {
    const names = ctx.foundTools;
    if (!names || names.length === 0) return [];
    let byName = this.#byName.get(all);
    if (!byName) this.#byName.set(all, (byName = new Map(all.map((t) => [String(t.name), t]))));
    const out: Entry[] = [];
    for (const name of names) {
      const entry = byName.get(name);
      if (entry && shows(name)) out.push(entry);
    }
    return out;
  }

  /** An endpoint config's pinned globs, compiled once per config (a reload makes a new one). */
  #pins(config: ToolSearchConfig): Glob[] {
    let pins = this.#compiled.get(config);
    if (!pins) this.#compiled.set(config, (pins = (config.pinned ?? []).map(globPattern)));
    return pins;
  }

  #summary(all: ReadonlyArray<Entry>, view: ServerView | undefined, catalog: Catalog, config: ToolSearchConfig) {
    let byConfig = this.#summaries.get(all);
    if (!byConfig) this.#summaries.set(all, (byConfig = new Map()));
    let summary = byConfig.get(config);
    if (summary === undefined) {
      const upstreams = new Set<string>();
      for (const t of all) upstreams.add(upstreamOf(view, catalog, String(t.name)));
      upstreams.delete('');
      summary = searchDescription(all.length, [...upstreams].sort(), config);
      byConfig.set(config, summary);
    }
    return summary;
  }
}

function exposes(config: ToolSearchConfig): boolean {
  return config.expose === 'list_changed';
}

const TOOLS_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as const;

/**
 * With `expose: list_changed`, `names` join a 2025 session's found tools (its record, so any
 * replica lists them) and, when its list changed, it hears list_changed on its GET stream (else
 * on this request's). A stateless request has no session: nothing is kept. The search's or
 * call's answer stands if the store fails: the list is a convenience, the tools stay callable.
 */
async function expose(ctx: RequestContext, config: ToolSearchConfig, names: readonly string[]): Promise<void> {
  if (!exposes(config) || ctx.stateless || !ctx.setFoundTools || names.length === 0) return;
  const next = remember(ctx.foundTools, names, config.exposeMax ?? 20);
  if (!next) return;
  const kept = await ctx.setFoundTools(next.names).then(
    () => true,
    () => false,
  );
  if (!kept || !next.changed) return;
  if (!ctx.sessionSink?.send(TOOLS_CHANGED)) ctx.sink.send(TOOLS_CHANGED);
}

/** The endpoint's tools under its names: the view's selection, or the whole catalog. */
function tools(view: ServerView | undefined, catalog: Catalog): ReadonlyArray<Entry> {
  return view ? view.list(catalog, 'tools') : catalog.list('tools');
}

function offers(view: ServerView | undefined, catalog: Catalog, name: string): boolean {
  const exposed = view ? view.exposedTool(name) : name;
  return exposed !== undefined && catalog.tool(exposed) !== undefined;
}

function upstreamOf(view: ServerView | undefined, catalog: Catalog, name: string): string {
  const exposed = view ? view.exposedTool(name) : name;
  return (exposed === undefined ? undefined : catalog.tool(exposed)?.upstream) ?? '';
}

function describer(view: ServerView | undefined, catalog: Catalog): (entry: Entry) => SearchableTool {
  return (entry) => searchable(entry, upstreamOf(view, catalog, String(entry.name)));
}

/** A found tool as search_tools answers it. */
function shown(entry: Entry): Entry {
  const out: Entry = { name: entry.name };
  if (entry.title !== undefined) out.title = entry.title;
  if (entry.description !== undefined) out.description = entry.description;
  out.inputSchema = entry.inputSchema;
  return out;
}
