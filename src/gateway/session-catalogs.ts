// What one session's tools, prompts and resources are when some upstreams give it a worker of its
// own: those workers' lists (initialized with the client's capabilities, they may offer more or
// less than the gateway's probe saw), the shared catalog's for every other upstream.
import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import type { McpResult, UpstreamCall } from '../contracts/upstream.js';
import type { RequestContext } from '../contracts/request-context.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { Catalog, UpstreamLists } from './catalog.js';
import type { ServerView } from './server-views.js';
import type { CatalogManager } from './catalog-manager.js';
import type { UpstreamEntry } from './upstream-entry.js';
import { CapabilityCatalogs, type CatalogTarget } from './capability-catalogs.js';

/**
 * How long a session's catalog is used before its workers are asked again. A list change of one
 * of its workers, on any replica, drops it at once (forget); this bounds a change whose message
 * between replicas was lost.
 */
const SESSION_CATALOG_TTL_MS = 10_000;
/** Sessions whose catalog is kept, on this replica; past it the oldest go (and are built again when asked). */
const MAX_SESSION_CATALOGS = 10_000;

export interface SessionCatalogsOptions {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  catalogs: CatalogManager;
  /** One call on the session's own worker of `upstream`, wherever it runs (started if it is not). */
  call: (
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
  ) => Promise<McpResult>;
  /** Whether the session has a worker of `upstream` already (here or on its owner replica). */
  hasWorker: (scope: string, upstream: string) => Promise<boolean>;
  log: Logger;
  ttlMs?: number;
}

/** Whether a build in flight still counts: not once the session's lists changed under it (its result is not kept). */
interface BuildState {
  current: boolean;
}

interface Building {
  promise: Promise<Catalog>;
  state: BuildState;
}

interface Kept {
  /** The shared catalog it was built over: once that is replaced, this one is stale too. */
  base: Catalog;
  catalog: Catalog;
  expires: number;
}

export class SessionCatalogs {
  readonly #kept = new Map<string, Kept>();
  readonly #building = new Map<string, Building>();
  /**
   * Built just now with a worker that failed (to start, say): a call to that upstream on it fails so, without a second
   * start.
   */
  readonly #failed = new WeakMap<Catalog, ReadonlyMap<string, GatewayError>>();
  /** Every catalog built from one session's own workers (see isOwn). */
  readonly #own = new WeakSet<Catalog>();
  /** A stateless request's catalog: its lists as the upstreams give them to its capabilities. */
  readonly #stateless: CapabilityCatalogs;

  constructor(private readonly options: SessionCatalogsOptions) {
    this.#stateless = new CapabilityCatalogs(options);
  }

  /**
   * The catalog a request reads: a stateless one's as its capabilities have it (see
   * CapabilityCatalogs); the shared one when no upstream has workers per session; else the session's.
   * `target`: what a call names (see targetOf). A session's catalog is built by asking its own
   * workers, which starts them: a call that needs none is answered from the shared catalog.
   */
  catalogFor(ctx: RequestContext, target?: CatalogTarget): Catalog | Promise<Catalog> {
    const base = this.options.catalogs.catalog;
    if (ctx.stateless) return this.#stateless.catalogFor(ctx, base, target);
    const own = this.#ownUpstreams();
    if (own.length === 0) return base;
    const kept = this.#kept.get(ctx.scope);
    if (kept && kept.base === base && kept.expires > Date.now()) return kept.catalog;
    if (target) {
      const route = target(base);
      // A shared upstream's entry is the same in every session's catalog (a colliding one makes it the shared catalog).
      if (route && !own.includes(route.upstream)) return base;
      // Named nowhere in the shared catalog: only a worker the session already has could list it.
      if (!route) return this.#unlessWorkers(ctx, base, own);
    }
    return this.#shared(ctx, base, own);
  }

  async #unlessWorkers(ctx: RequestContext, base: Catalog, own: readonly string[]): Promise<Catalog> {
    const running = await Promise.all(own.map((name) => this.options.hasWorker(ctx.scope, name)));
    return running.includes(true) ? this.#shared(ctx, base, own) : base;
  }

  /** The session's catalog, one build at a time per session. */
  #shared(ctx: RequestContext, base: Catalog, own: readonly string[]): Promise<Catalog> {
    const { scope } = ctx;
    let building = this.#building.get(scope);
    if (!building) {
      const state: BuildState = { current: true };
      const promise = this.#build(ctx, base, own, state).finally(() => {
        if (this.#building.get(scope)?.state === state) this.#building.delete(scope);
      });
      this.#building.set(scope, (building = { promise, state }));
    }
    return building.promise;
  }

  /** Why `upstream`'s own worker gave `catalog` no lists (undefined: it did, or `catalog` is not a session's). */
  failure(catalog: Catalog, upstream: string): GatewayError | undefined {
    return this.#failed.get(catalog)?.get(upstream);
  }

  /** Whether `catalog` is one session's own (from its own workers), not one that other callers read too. */
  isOwn(catalog: Catalog): boolean {
    return this.#own.has(catalog);
  }

  /** The lists each session on this replica last got from its own workers (for /status). */
  kept(): Catalog[] {
    return [...this.#kept.values()].map((k) => k.catalog);
  }

  /** The session ended, or one of its workers said its lists changed: they are asked again next time. */
  forget(scope: string): void {
    this.#kept.delete(scope);
    const building = this.#building.get(scope);
    if (building) building.state.current = false;
    this.#building.delete(scope);
  }

  #ownUpstreams(): string[] {
    const { upstreams, catalogs } = this.options;
    const own: string[] = [];
    for (const [name, entry] of upstreams) if (entry.workers.perScope && catalogs.listed(name)) own.push(name);
    return own;
  }

  async #build(ctx: RequestContext, base: Catalog, own: readonly string[], state: BuildState): Promise<Catalog> {
    const { catalogs, log } = this.options;
    const lists = new Map<string, UpstreamLists>();
    const failed = new Map<string, GatewayError>();
    let complete = true;
    await Promise.all(
      own.map(async (name) => {
        try {
          const call = (method: string, params: Record<string, unknown> | undefined): UpstreamCall => ({
            promise: this.options.call(ctx, name, method, params),
            cancel: () => undefined,
          });
          lists.set(name, await catalogs.listsVia(name, call));
        } catch (err) {
          // Its worker did not answer: the shared lists stand in (its calls will say what is wrong).
          complete = false;
          if (err instanceof GatewayError) failed.set(name, err);
          log.debug(
            { upstream: name, err: err instanceof Error ? err.message : String(err) },
            "session's own lists unavailable; using the shared ones",
          );
        }
      }),
    );
    let catalog: Catalog;
    try {
      catalog = catalogs.withLists(lists);
      this.#own.add(catalog);
    } catch (err) {
      log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "a session's own lists collide with another upstream's; it sees the shared catalog",
      );
      return base;
    }
    if (failed.size > 0) this.#failed.set(catalog, failed);
    // One whose workers did not all answer is not kept: the next request asks them again.
    if (complete && state.current && this.options.catalogs.catalog === base) {
      if (this.#kept.size >= MAX_SESSION_CATALOGS && !this.#kept.has(ctx.scope))
        this.#kept.delete(this.#kept.keys().next().value!);
      this.#kept.set(ctx.scope, {
        base,
        catalog,
        expires: Date.now() + (this.options.ttlMs ?? SESSION_CATALOG_TTL_MS),
      });
    }
    return catalog;
  }
}

/**
 * What a call (not a list) names, as `catalog` routes it: a tool (by a virtual server's name,
 * when `view` renames), a prompt, a resource; undefined when the catalog has no such entry.
 * Lists have no target: they need the session's own lists.
 */
export function targetOf(request: JsonRpcRequest, view: ServerView | undefined): CatalogTarget | undefined {
  const params = request.params;
  const name = typeof params?.name === 'string' ? params.name : undefined;
  const uri = typeof params?.uri === 'string' ? params.uri : undefined;
  switch (request.method) {
    case 'tools/call': {
      const exposed = name !== undefined && view ? view.exposedTool(name) : name;
      return Object.assign((catalog: Catalog) => (exposed === undefined ? undefined : catalog.tool(exposed)), {
        label: `Tool ${String(name)}`,
      });
    }
    case 'prompts/get':
      return Object.assign((catalog: Catalog) => (name === undefined ? undefined : catalog.prompt(name)), {
        label: `Prompt ${String(name)}`,
      });
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return Object.assign((catalog: Catalog) => (uri === undefined ? undefined : catalog.resource(uri)), {
        label: `Resource ${String(uri)}`,
      });
    case 'completion/complete': {
      const ref = isObject(params?.ref) ? params.ref : {};
      if (ref.type === 'ref/prompt' && typeof ref.name === 'string')
        return (catalog) => catalog.prompt(ref.name as string);
      if (ref.type === 'ref/resource' && typeof ref.uri === 'string')
        return (catalog) => catalog.resource(ref.uri as string);
      return () => undefined;
    }
    default:
      return undefined;
  }
}
