import { readFileSync } from 'node:fs';
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GatewayConfig } from './config/schema.js';
import { PerSessionRouter } from './gateway/per-session-router.js';
import { upstreamSessionMemory } from './session/upstream-session-memory.js';
import { VirtualServer } from './gateway/virtual-server.js';
import { registerHealth } from './server/health.js';
import { capConnections, serverOptions } from './server/server-limits.js';
import { LATEST_VERSION } from './jsonrpc/versions.js';
import { createLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import type { DataPathEvents } from './observability/events.js';
import { observeGateway } from './observability/subscribers.js';
import type { EventStore } from './streams/event-store.js';
import { MemoryEventStore } from './streams/memory-event-store.js';
import { MemorySessionStore } from './session/memory-store.js';
import { connectRedis, diagnoseCluster, redisTarget, type RedisTarget } from './redis/connection.js';
import { RedisEventStore } from './streams/redis-event-store.js';
import { CachedSessionStore } from './session/cached-store.js';
import { RedisSessionStore, type RedisStoreStatus } from './session/redis-store.js';
import type { Bus } from './cluster/bus.js';
import { createReplication } from './cluster/replication.js';
import { announceSessionChange, subscribeSessionChanges } from './cluster/session-changes.js';
import type { SessionLimits, SessionStore } from './session/session-store.js';
import { createOriginCheck } from './server/origin.js';
import { createAuthenticator, registerProtectedResourceMetadata } from './server/auth/authenticator.js';
import { ListenStreams } from './modern/listen-streams.js';
import { SessionStreams } from './streams/session-streams.js';
import { StreamServices } from './streams/stream-services.js';
import { registerEndpointMethods } from './server/endpoint-methods.js';
import { registerStreamableHttp, type StreamableHttpTransport } from './transport/streamable-http.js';
import { UpstreamGroup, type UpstreamPeers } from './upstream/group.js';
import type { PoolStatus } from './upstream/worker-set.js';
import type { ClientIdentity } from './contracts/upstream.js';
import { Reloader, type ReloadResult, type ReloadStatus, type ReloadTrigger } from './reloader.js';

export const GATEWAY_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export interface BuildOptions {
  logger?: Logger;
  /** Collect Node's default process metrics (off in tests that build many apps). */
  defaultMetrics?: boolean;
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
  /**
   * Starts the bus, the store's subscriptions and every upstream, and loads the catalog; until
   * it resolves /readyz is 503 and MCP requests get NOT_READY. Rejects at once on a fatal
   * configuration error (a catalog collision). Called once; later calls return the same promise.
   */
  start(): Promise<void>;
  /** true once start() has succeeded. */
  readonly ready: boolean;
  /** Stops taking work, lets replies in flight finish (up to shutdown.drainMs), stops upstreams. */
  close(): Promise<void>;
  /** Loads the config file again and applies what changed, keeping every session (see reloader.ts). */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /** The running config's origin and the last reload's outcome (for /status). */
  reloadStatus(): ReloadStatus;
}

/** The session store, and the state of its connection when it has one (for /readyz). */
function createStore(config: GatewayConfig, log: Logger, bus: Bus): { store: SessionStore; status?: () => RedisStoreStatus; start(): Promise<void> } {
  const { store, keyPrefix, ttlSeconds, cacheMs, health } = config.sessions;
  const limits: SessionLimits = {
    maxSessions: config.limits.maxSessions,
    maxPerPrincipal: config.limits.maxSessionsPerPrincipal,
    evictIdleMs: config.limits.sessionEvictionIdleSeconds * 1000,
  };
  if (store === 'redis') {
    const target = redisTarget(config.sessions);
    if (!target) throw new Error('sessions.redisUrl or sessions.redis is required when sessions.store is "redis"');
    const redis = new RedisSessionStore({ target, keyPrefix, ttlSeconds, limits, health, log });
    if (cacheMs === 0) return { store: redis, status: () => redis.status(), start: async () => undefined };
    const cached = new CachedSessionStore(redis, {
      maxAgeMs: cacheMs,
      healthy: () => redis.ready,
      announce: (id) => announceSessionChange(bus, id),
    });
    return {
      store: cached,
      status: () => redis.status(),
      // Every replica drops its copy of a session another replica changed or deleted.
      start: async () => {
        await subscribeSessionChanges(bus, (id) => cached.invalidate(id));
      },
    };
  }
  return { store: new MemorySessionStore({ ttlSeconds, limits }), start: async () => undefined };
}

/**
 * Start-up subscribes to the bus. A single Redis gives up on a command after its retries, but a
 * Cluster client queues commands until it reaches the cluster, however long that takes: a replica
 * that cannot reach its Redis must fail its start and say why, not hang in it.
 */
const REDIS_START_DEADLINE_MS = 15_000;

async function withinStartDeadline(start: Promise<void>, target: RedisTarget | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const said = `Redis was not reachable within ${REDIS_START_DEADLINE_MS / 1000} s of start`;
      void (target ? diagnoseCluster(target) : Promise.resolve(undefined)).then(
        (why) => reject(new Error(why ? `${said}: ${why}` : `${said} (see the Redis connection errors logged above)`)),
        () => reject(new Error(said)),
      );
    }, REDIS_START_DEADLINE_MS);
  });
  try {
    await Promise.race([start, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where SSE events are recorded: beside the sessions (Redis when they are in Redis). */
function createEventStore(config: GatewayConfig, log: Logger): EventStore {
  const limits = { maxEvents: config.resumability.maxEvents, maxAgeMs: config.resumability.maxAgeSeconds * 1000 };
  const target = redisTarget(config.sessions);
  if (target) {
    return new RedisEventStore(connectRedis({ target, name: 'mcp-gateway-events', log }), { ...limits, keyPrefix: config.sessions.keyPrefix });
  }
  return new MemoryEventStore(limits);
}

/** The virtual server over every configured upstream, and the per-session router beside it (nothing started). */
function createVirtualServer(config: GatewayConfig, identity: ClientIdentity, replication: Replication, store: SessionStore, log: Logger, diagnostics: DataPathEvents) {
  // The upstreams' peers call back into the server and router, which need the upstreams first.
  let server: VirtualServer | undefined;
  let router: PerSessionRouter | undefined;
  const peers: UpstreamPeers = {
    shared: (upstream) => server!.sharedPeer(upstream),
    perSession: (upstream, scope) => router!.peer(upstream, scope),
  };
  const group = new UpstreamGroup(config.upstreams, {
    identity,
    peers,
    memoryFor: (upstream, scope) => upstreamSessionMemory(store, upstream, scope, log),
    logRepeatMs: config.logRepeatMs,
    log,
    diagnostics,
  });
  router = new PerSessionRouter({
    upstreams: group.perSession(),
    bus: replication.bus,
    owners: replication.owners,
    log,
    onListChanged: (upstream, method) => server?.listChanged(upstream, method),
    inputWaitMs: config.stateless.inputTimeoutMs,
  });
  server = new VirtualServer({
    upstreams: group.upstreams,
    perSession: router,
    bus: replication.bus,
    // A probe of a per-session upstream offers every client capability, so no tool stays hidden.
    probeIdentity: { ...identity, capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
    serverInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
    pageSize: config.pagination.pageSize,
    caching: config.stateless,
    log,
    diagnostics,
  });
  return { server, router, group };
}

type Replication = ReturnType<typeof createReplication>;

interface HttpParts {
  config: GatewayConfig;
  log: Logger;
  metrics: Metrics;
  diagnostics: DataPathEvents;
  server: VirtualServer;
  store: SessionStore;
  storeStatus: (() => RedisStoreStatus) | undefined;
  streams: SessionStreams;
  listens: ListenStreams;
  upstreamStatus: () => Record<string, PoolStatus>;
  /** Live: a reload changes them in place. */
  required: Set<string>;
  intake: { maxDepth: number; maxBatch: number };
  isDraining: () => boolean;
  isReady: () => boolean;
}

/** The Fastify app: server limits, CORS, health, OAuth metadata and the MCP endpoint. Nothing listens yet. */
async function createHttp(parts: HttpParts): Promise<{ app: FastifyInstance; transport: StreamableHttpTransport }> {
  const { config, log, metrics, diagnostics } = parts;
  const isAllowedOrigin = createOriginCheck(config.security.allowedOrigins);
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // One log line per request costs more than the request itself on the fast path.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.limits.bodyBytes,
    // close() runs after the drain: whatever is still open then is cut, so shutdown ends.
    forceCloseConnections: true,
    ...serverOptions(config.server, diagnostics, log),
  });
  capConnections(app.server, config.server.maxConnections, diagnostics, log);
  // Before CORS, which would answer a bad preflight in its own terms.
  registerEndpointMethods(app, { path: config.path, isAllowedOrigin, diagnostics });
  await app.register(cors, {
    origin: (origin, cb) => cb(null, isAllowedOrigin(origin)),
    methods: ['GET', 'POST', 'DELETE'],
    // Not listed: the request's own (preflight) header list is allowed, origin permitting, since
    // 2026-07-28 clients send Mcp-Param-* headers whose names come from tool schemas.
    exposedHeaders: ['mcp-session-id', 'www-authenticate'],
  });
  registerHealth(app, {
    required: parts.required,
    isDraining: parts.isDraining,
    isStarted: parts.isReady,
    metrics,
    upstreams: parts.upstreamStatus,
    store: parts.storeStatus,
  });
  registerProtectedResourceMetadata(app, config.auth);
  const authenticator = createAuthenticator(config.auth, log, diagnostics);
  const transport = registerStreamableHttp(app, {
    path: config.path,
    bodyLimit: config.limits.bodyBytes,
    intake: parts.intake,
    maxInFlightPerClient: config.limits.maxInFlightPerClient,
    maxStreams: config.limits.maxStreams,
    handler: parts.server,
    store: parts.store,
    streams: parts.streams,
    listens: parts.listens,
    isAllowedOrigin,
    diagnostics,
    isDraining: parts.isDraining,
    isReady: parts.isReady,
    ...(authenticator ? { auth: authenticator } : {}),
  });
  // Open SSE streams would keep fastify.close() waiting forever.
  app.addHook('preClose', async () => {
    parts.listens.closeAll();
    parts.streams.closeAll();
  });
  return { app, transport };
}

/** Side by side: a collision in the catalog is reported at once, not after a slow Redis or upstream. */
async function startParts(target: RedisTarget | undefined, router: PerSessionRouter, server: VirtualServer, group: UpstreamGroup, store: { start(): Promise<void> }): Promise<void> {
  await Promise.all([
    withinStartDeadline(router.start(), target),
    server.start().then(() => {
      // A remote upstream that goes down leaves the catalog (clients get list_changed) and returns when it recovers.
      group.watchHealth((name, available) => server.setAvailable(name, available));
    }),
    withinStartDeadline(store.start(), target),
  ]);
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
  const identity: ClientIdentity = {
    clientInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
    // A shared worker serves many clients, so it is offered none of their capabilities.
    capabilities: {},
    protocolVersion: LATEST_VERSION,
  };
  const replication = createReplication(config, log);
  const created = createStore(config, log, replication.bus);
  const store = created.store;
  const { server, router, group } = createVirtualServer(config, identity, replication, store, log, diagnostics);
  const events = createEventStore(config, log);
  const streams = new SessionStreams({
    keepAliveMs: config.sse.keepAliveMs,
    services: new StreamServices({ events, bus: replication.bus, retryMs: config.resumability.retryMs, diagnostics, log }),
    // With Redis, another replica may hold a session's GET stream.
    distributed: config.sessions.store === 'redis',
    retainMs: config.resumability.maxAgeSeconds * 1000,
  });
  const listens = new ListenStreams(config.sse.keepAliveMs);
  const state = { draining: false, ready: false };
  const required = new Set(config.upstreams.filter((u) => u.required).map((u) => u.name));
  const intake = { maxDepth: config.limits.maxJsonDepth, maxBatch: config.limits.maxBatchSize };
  const { app, transport } = await createHttp({
    config,
    log,
    metrics,
    diagnostics,
    server,
    store,
    storeStatus: created.status,
    streams,
    listens,
    upstreamStatus: () => group.status(),
    required,
    intake,
    isDraining: () => state.draining,
    isReady: () => state.ready,
  });
  metrics.countSessions = () => store.size();
  metrics.storeStatus = created.status;
  metrics.countInputChains = () => router.chains;
  const announce = (method: string) => {
    streams.broadcast({ jsonrpc: '2.0', method });
    listens.broadcast(method);
  };
  server.onListChanged(announce);

  const targets = { group, server, intake, required, announce, setTransportLimits: transport.setLimits.bind(transport) };
  const reloader = new Reloader({ file: options.configFile, config, log, diagnostics, targets });

  let starting: Promise<void> | undefined;
  const start = () => {
    starting ??= startParts(redisTarget(config.sessions), router, server, group, created).then(() => {
      state.ready = true;
    });
    return starting;
  };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      state.draining = true;
      reloader.close();
      const deadline = Date.now() + config.shutdown.drainMs;
      while (transport.activeReplies > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      await server.close();
      await group.close();
      await replication.close();
      await app.close();
      await store.close();
      await events.close();
      unsubscribe();
    })();
    return closing;
  };

  return {
    app,
    server,
    store,
    events,
    streams,
    metrics,
    log,
    start,
    get ready() {
      return state.ready;
    },
    close,
    // A reload waits for the start-up's catalog: it changes what start() built.
    reload: async (trigger = 'api') => starting?.then(() => reloader.reload(trigger)) ?? reloader.reload(trigger),
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
