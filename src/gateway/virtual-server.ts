// The one MCP server clients see, as the transport knows it (McpHandler): a facade that builds
// and joins its parts, the dispatcher, catalog manager, subscriptions and capabilities.
import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { ClientIdentity, McpResult, UpstreamPeer } from '../contracts/upstream.js';
import type { Bus } from '../cluster/bus.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import type { MirroredParam } from '../modern/mirrored-params.js';
import { StatelessResults } from '../modern/result-shape.js';
import { Capabilities } from './capabilities.js';
import type { Catalog } from './catalog.js';
import { CatalogManager, type StagedCatalog } from './catalog-manager.js';
import { Dispatcher } from './dispatcher.js';
import { INTERNALS, type VirtualServerInternals } from './internals.js';
import type { PerSessionRouter } from './per-session-router.js';
import { Subscriptions } from './subscriptions.js';
import type { UpstreamEntry } from './upstream-entry.js';

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
  /** Where the data path's events go (metrics and the audit log subscribe). */
  diagnostics: DataPathEvents;
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

const NO_MIRRORED: readonly MirroredParam[] = [];

/** The one MCP server clients see, built from every upstream's catalog. */
export class VirtualServer implements McpHandler {
  readonly #catalogs: CatalogManager;
  readonly #capabilities: Capabilities;
  readonly #subscriptions: Subscriptions;
  readonly #dispatcher: Dispatcher;

  constructor(private readonly options: VirtualServerOptions) {
    const { upstreams, perSession, log } = options;
    this.#catalogs = new CatalogManager({ upstreams, probeIdentity: options.probeIdentity, log });
    this.#capabilities = new Capabilities(upstreams, options.serverInfo);
    this.#subscriptions = new Subscriptions({ upstreams, catalogs: this.#catalogs, perSession, log });
    this.#dispatcher = new Dispatcher({
      upstreams,
      perSession,
      bus: options.bus,
      catalogs: this.#catalogs,
      capabilities: this.#capabilities,
      subscriptions: this.#subscriptions,
      statelessResults: new StatelessResults({ serverInfo: options.serverInfo, caching: options.caching }),
      pageSize: options.pageSize,
      log,
      diagnostics: options.diagnostics,
    });
  }

  get catalog(): Catalog {
    return this.#catalogs.catalog;
  }

  /** For tests only (see internals.ts). */
  get [INTERNALS](): VirtualServerInternals {
    const { upstreams } = this.options;
    const dispatcher = this.#dispatcher;
    return {
      get inFlight() {
        return dispatcher.inFlight;
      },
      perSessionWorkers(upstream) {
        const entry = upstreams.get(upstream);
        return entry?.workers.scopes ?? 0;
      },
    };
  }

  /** Brings up the upstreams and their catalog (see CatalogManager.start), then hears cancellations from other replicas. */
  async start(): Promise<void> {
    await this.#catalogs.start();
    await this.#dispatcher.start();
  }

  initialize(params: Record<string, unknown> | undefined): { protocolVersion: string; result: McpResult } {
    return this.#capabilities.initialize(params);
  }

  capabilities(stateless: boolean): Record<string, unknown> {
    return this.#capabilities.merged(stateless);
  }

  mirroredParams(tool: string): readonly MirroredParam[] {
    return this.#catalogs.catalog.tool(tool)?.mirrored ?? NO_MIRRORED;
  }

  handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse> {
    return this.#dispatcher.handleRequest(ctx, request);
  }

  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void {
    this.#dispatcher.handleNotification(ctx, notification);
  }

  handleResponse(ctx: RequestContext, response: JsonRpcResponse): void {
    this.#dispatcher.handleResponse(ctx, response);
  }

  watchResources(ctx: RequestContext, uris: unknown, sink: MessageSink): string[] {
    return this.#subscriptions.watch(ctx, uris, sink);
  }

  releaseScope(scope: string): void {
    this.#dispatcher.releaseScope(scope);
    this.#subscriptions.release(scope);
    this.options.perSession.release(scope);
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
    await this.options.perSession.close();
    await Promise.all([...this.options.upstreams.values()].map((u) => u.workers.close()));
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
    this.#catalogs.onListChanged(listener);
  }

  /** A per-session upstream's lists changed. */
  listChanged(upstream: string, method: string): void {
    this.#catalogs.refreshLater(upstream, method);
  }

  /**
   * A config reload's catalog, checked but not in place: `entries` are the added or changed
   * upstreams (their workers start now), `removed` the ones that go (see CatalogManager.stage).
   */
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
    // Logging and other notifications of a shared worker belong to no one client: never broadcast.
  }
}
