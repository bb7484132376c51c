import { GATEWAY_VERSION } from './version.js';
import { type FastifyInstance } from 'fastify';
import type { GatewayConfig, ServerEntryConfig } from './config/schema.js';
import { PerSessionRouter } from './gateway/per-session-router.js';
import { VirtualServer } from './gateway/virtual-server.js';
import { ConfigStatus } from './config/reload-state.js';
import { closeSideStores, createSideStores, createStore, sideStoresReady, withinStartDeadline } from './stores.js';
import { withSideConnections } from './stores.js';
import type { SideStores } from './stores.js';
import { createHttp } from './http-app.js';
import { createVirtualServer } from './gateway-parts.js';
import { startTracing, type TraceEnv } from './observability/tracing.js';
import { LATEST_VERSION } from './jsonrpc/versions.js';
import { UI_EXTENSION, UI_EXTENSION_SETTINGS } from './jsonrpc/meta-keys.js';
import { createLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import type { DataPathEvents } from './observability/events.js';
import { observeGateway } from './observability/subscribers.js';
import type { EventStore } from './streams/event-store.js';
import { redisTarget } from './redis/connection.js';
import { createReplication } from './cluster/replication.js';
import type { SessionStore } from './session/session-store.js';
import { ListenStreams } from './stateless/listen-streams.js';
import { SessionStreams } from './streams/session-streams.js';
import { StreamServices } from './streams/stream-services.js';
import type { UpstreamGroup } from './upstream/group.js';
import type { ClientIdentity } from './contracts/upstream.js';
import { Reloader, type ReloadResult, type ReloadStatus, type ReloadTargets, type ReloadTrigger } from './reloader.js';
import type { ConfigDiff } from './config/diff.js';
import type { RedisStoreStatus } from './session/redis-store.js';
import type { Bus } from './cluster/bus.js';
import type { Connections } from './transport/connections.js';
import { sandboxesReady } from './upstream/sandbox-probe.js';
import type { LiveLimits } from './live-limits.js';

export { GATEWAY_VERSION };

export interface BuildOptions {
  logger?: Logger;
  /** Collect Node's default process metrics (off in tests that build many apps). */
  defaultMetrics?: boolean;
  /** Where the OTEL_* tracing settings are read (default: process.env). */
  env?: TraceEnv;
  /** The file `config` was loaded from, which reload() reads again (undefined: the embedded default). */
  configFile?: string;
}

export interface Gateway {
  app: FastifyInstance;
  server: VirtualServer;
  store: SessionStore;
  /** Recorded SSE events (resumability). */
  events: EventStore;
  /** The SSE streams of sessions on this replica: GET streams, recorded replies, resumptions. */
  streams: SessionStreams;
  metrics: Metrics;
  log: Logger;
  /** What /status says of the config: main.ts sets its source; a reload feature reports its outcomes here. */
  configStatus: ConfigStatus;
  /**
   * Starts the bus, the store's subscriptions and every upstream, and loads the catalog; until
   * it resolves /readyz is 503 and MCP requests get NOT_READY. Rejects at once on a fatal
   * configuration error (a catalog collision). Called once; later calls return the same promise.
   */
  start(): Promise<void>;
  /** true once start() has succeeded. */
  readonly ready: boolean;
  /**
   * Replaces the virtual servers (`servers:`) at once, e.g. on a reload: checked against the
   * current catalog, and on any error (ServerViewsError, gateway/server-views.ts) nothing changes. Every session hears
   * list_changed. A path that had no route when the gateway was built cannot get one live:
   * it is named in `needsRestart` (its server is kept, and served after a restart).
   */
  setServers(servers: readonly ServerEntryConfig[]): { warnings: string[]; needsRestart: string[] };
  /** Stops taking work, lets replies in flight finish (up to shutdown.drainMs), stops upstreams. */
  close(): Promise<void>;
  /** Loads the config file again and applies what changed, keeping every session (see reloader.ts). */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /** The running config's origin and the last reload's outcome (for /status). */
  reloadStatus(): ReloadStatus;
}

/** Who the gateway is to its upstreams when it speaks for no client. */
const GATEWAY_IDENTITY: ClientIdentity = {
  clientInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
  // A shared worker serves many clients, so it is offered none of their capabilities; MCP Apps is the gateway's own.
  capabilities: { extensions: { [UI_EXTENSION]: UI_EXTENSION_SETTINGS } },
  protocolVersion: LATEST_VERSION,
};

/**
 * Side by side: a collision in the catalog is reported at once, not after a slow Redis or upstream. A host
 * that cannot run the configured sandboxes fails first: their workers could never start.
 */
async function startParts(
  config: GatewayConfig,
  { router, server, group }: ReturnType<typeof createVirtualServer>,
  store: { start(): Promise<void> },
  side: SideStores,
): Promise<void> {
  await sandboxesReady(config.upstreams);
  const target = redisTarget(config.sessions);
  await Promise.all([
    withinStartDeadline(router.start(), target),
    withinStartDeadline(sideStoresReady(side), target),
    server.start().then(() => {
      // A remote upstream that goes down leaves the catalog (clients get list_changed) and returns when it recovers.
      group.watchHealth((name, available) => server.setAvailable(name, available));
    }),
    withinStartDeadline(store.start(), target),
  ]);
}

/** Where SSE events of sessions go: written, recorded for resumption, relayed between replicas. */
function createSessionStreams(
  config: GatewayConfig,
  events: EventStore,
  bus: Bus,
  diagnostics: DataPathEvents,
  log: Logger,
): SessionStreams {
  return new SessionStreams({
    keepAliveMs: config.sse.keepAliveMs,
    services: new StreamServices({ events, bus, retryMs: config.resumability.retryMs, diagnostics, log }),
    // With Redis, another replica may hold a session's GET stream.
    distributed: config.sessions.store === 'redis',
    retainMs: config.resumability.maxAgeSeconds * 1000,
  });
}

/** The gauges read at scrape time from the parts that know them. */
function gaugeParts(
  metrics: Metrics,
  store: SessionStore,
  storeStatus: (() => RedisStoreStatus) | undefined,
  group: UpstreamGroup,
  router: PerSessionRouter,
): void {
  metrics.countSessions = () => store.size();
  if (storeStatus) metrics.observeStore(storeStatus);
  metrics.upstreamStates = () => group.status();
  metrics.countInputChains = () => router.chains;
}

/** A reload's virtual servers: what it could not apply live is said, not lost. */
function reportServers({ warnings, needsRestart }: { warnings: string[]; needsRestart: string[] }, log: Logger): void {
  for (const w of warnings) log.warn({ warning: w }, 'reload: servers');
  if (needsRestart.length > 0)
    log.warn({ paths: needsRestart }, 'reload: these virtual servers have no route yet and are served after a restart');
}

/** A list_changed to every client here: SSE GET streams, 2026-07-28 listen streams, WebSocket and legacy sessions. */
function fanOut(streams: SessionStreams, listens: ListenStreams, connections: Connections | undefined) {
  return (method: string): void => {
    streams.broadcast({ jsonrpc: '2.0', method });
    listens.broadcast(method);
    connections?.broadcast({ jsonrpc: '2.0', method });
  };
}

/** Shutdown, one step after another: a step that fails is logged and the rest still run. */
async function closeInOrder(steps: ReadonlyArray<() => unknown>, log: Logger): Promise<void> {
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      log.error({ err }, 'shutdown: a step failed; the others still run');
    }
  }
}

/** Lets the replies in flight finish, up to `ms`. */
async function drain(active: () => number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (active() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

/**
 * A reload's sections applied live: `servers` (replaced whole; setServers sends its own list_changed), the rate
 * limits and quotas, `tasks`, the main path's `toolSearch`.
 */
function applySections(
  next: GatewayConfig,
  diff: ConfigDiff,
  setServers: (servers: readonly ServerEntryConfig[]) => { warnings: string[]; needsRestart: string[] },
  live: {
    tasksReload: { apply(next: GatewayConfig): string[] };
    limits: LiveLimits;
    toolSearch: { apply(next: GatewayConfig, diff: ConfigDiff): string[] };
  },
  log: Logger,
): string[] {
  if (diff.servers) reportServers(setServers(next.servers), log);
  live.limits.apply(next, diff);
  return [...live.tasksReload.apply(next), ...live.toolSearch.apply(next, diff)];
}

/** The shutdown steps, in order: drain (up to shutdown.drainMs), then each part, tracing last. */
function shutdownSteps(
  p: {
    app: FastifyInstance;
    server: VirtualServer;
    group: UpstreamGroup;
    replication: { close(): unknown };
    store: SessionStore;
    side: SideStores;
    limits: LiveLimits;
    reloader: Reloader;
    transport: { readonly activeReplies: number };
    connections: Connections | undefined;
  },
  state: { draining: boolean },
  config: GatewayConfig,
  unsubscribe: () => unknown,
  stopTracing: (() => unknown) | undefined,
): Array<() => unknown> {
  return [
    async () => {
      state.draining = true;
      p.reloader.close();
      // POST replies, and requests on WebSocket and legacy HTTP+SSE sessions.
      await drain(() => p.transport.activeReplies + (p.connections?.activeRequests ?? 0), config.shutdown.drainMs);
    },
    () => p.server.close(),
    () => p.group.close(),
    () => p.replication.close(),
    () => p.app.close(),
    () => p.store.close(),
    () => p.limits.close(),
    ...closeSideStores(p.side),
    unsubscribe,
    // Last: the spans of the requests that just drained are flushed to the collector.
    () => stopTracing?.(),
  ];
}

/** What createReloader wires a reload to, besides the config and its log. */
interface ReloadWiring {
  built: ReturnType<typeof createVirtualServer>;
  side: SideStores;
  announce: (method: string) => void;
  intake: { maxDepth: number; maxBatch: number };
  required: Set<string>;
  setTransportLimits: ReloadTargets['setTransportLimits'];
}

/**
 * The reloader and what it changes. `setServers` answers which paths need a restart: the virtual
 * servers' paths that had routes when the gateway was built (Fastify takes no new routes once it listens).
 */
function createReloader(
  config: GatewayConfig,
  options: BuildOptions,
  log: Logger,
  diagnostics: DataPathEvents,
  { built, side, announce, intake, required, setTransportLimits }: ReloadWiring,
) {
  const { server, group, liveTasks: tasksReload, limits } = built;
  const routed = new Set(server.serverPaths);
  const setServers = (servers: readonly ServerEntryConfig[]) => {
    const warnings = server.setServers(servers);
    return { warnings, needsRestart: server.serverPaths.filter((p) => !routed.has(p)) };
  };
  const targets = {
    ...{ group, server, intake, required, announce, setTransportLimits },
    ...{ restartOnly: tasksReload.restartOnly, holdsTokens: side.tokens !== undefined, pins: built.pinsReload },
    applySections: (next: GatewayConfig, diff: ConfigDiff) =>
      applySections(next, diff, setServers, { tasksReload, limits, toolSearch: built.toolSearchReload }, log),
  };
  return { reloader: new Reloader({ file: options.configFile, config, log, diagnostics, targets }), setServers };
}

/**
 * Builds the whole gateway without starting anything: the app can listen at once (health
 * answers, /readyz and MCP requests say "starting") while `start()` brings up the upstreams.
 */
export async function createGateway(config: GatewayConfig, options: BuildOptions = {}): Promise<Gateway> {
  const log = options.logger ?? createLogger(config.logLevel);
  const metrics = new Metrics({ defaultMetrics: options.defaultMetrics });
  // The data path publishes; this gateway's metrics and audit log hear only its own events.
  const { diagnostics, unsubscribe } = observeGateway(metrics, config.audit.methods, log);
  // Off (and the SDK not even loaded) unless OTEL_TRACES_EXPORTER asks for it.
  const stopTracing = await startTracing(diagnostics.gateway, options.env ?? process.env, log, GATEWAY_VERSION);
  const replication = createReplication(config, log);
  const created = createStore(config, log, replication.bus, diagnostics);
  const { store } = created;
  const side = createSideStores(config, log);
  const storeStatus = created.status && withSideConnections(created.status, side);
  const built = createVirtualServer(config, GATEWAY_IDENTITY, replication, store, log, diagnostics, side);
  const { server, router, group, limits } = built;
  const streams = createSessionStreams(config, side.events, replication.bus, diagnostics, log);
  const listens = new ListenStreams(config.sse.keepAliveMs);
  const state = { draining: false, ready: false };
  const configStatus = new ConfigStatus();
  const required = new Set(config.upstreams.filter((u) => u.required).map((u) => u.name));
  const intake = { maxDepth: config.limits.maxJsonDepth, maxBatch: config.limits.maxBatchSize };
  const http = await createHttp({
    config,
    log,
    metrics,
    diagnostics,
    server,
    store,
    bus: replication.bus,
    storeStatus,
    streams,
    listens,
    required,
    intake,
    configStatus,
    upstreamStatus: () => group.status(),
    isDraining: () => state.draining,
    isReady: () => state.ready,
    inputChains: () => router.chains,
    quotas: () => limits.quotaReport(),
    tokens: side.tokens,
    upstreams: () => reloader.config.upstreams,
  });
  const { app, transport, unsubscribe: unsubscribeHttp, connections } = http;
  gaugeParts(metrics, store, storeStatus, group, router);
  const announce = fanOut(streams, listens, connections);
  server.onListChanged(announce);
  const { reloader, setServers } = createReloader(config, options, log, diagnostics, {
    ...{ built, side, announce, intake, required },
    setTransportLimits: transport.setLimits.bind(transport),
  });
  configStatus.enableReload();
  let starting: Promise<void> | undefined;
  const start = () => {
    starting ??= startParts(config, built, created, side).then(() => {
      state.ready = true;
    });
    return starting;
  };
  let closing: Promise<void> | undefined;
  const parts = { app, server, group, replication, store, side, limits, reloader, transport, connections };
  const unsubscribeAll = () => [unsubscribe(), unsubscribeHttp()];
  const close = () => {
    closing ??= closeInOrder(shutdownSteps(parts, state, config, unsubscribeAll, stopTracing), log);
    return closing;
  };
  const reload = async (trigger: ReloadTrigger = 'api'): Promise<ReloadResult> => {
    // A reload waits for the start-up's catalog: it changes what start() built.
    const result = await (starting?.then(() => reloader.reload(trigger)) ?? reloader.reload(trigger));
    configStatus.recordReload(result.outcome, result.error);
    return result;
  };
  return {
    app,
    server,
    store,
    events: side.events,
    streams,
    metrics,
    log,
    configStatus,
    start,
    get ready() {
      return state.ready;
    },
    setServers,
    close,
    reload,
    reloadStatus: () => reloader.status,
  };
}

/** Builds the whole gateway and starts it: upstreams started and catalog loaded, ready to listen. */
export async function buildApp(config: GatewayConfig, options: BuildOptions = {}): Promise<Gateway> {
  const gateway = await createGateway(config, options);
  try {
    await gateway.start();
  } catch (err) {
    await gateway.close();
    throw err;
  }
  return gateway;
}
