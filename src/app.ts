import { readFileSync } from 'node:fs';
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GatewayConfig, UpstreamConfig } from './config/schema.js';
import { PerSessionRouter, type PerSessionUpstream } from './gateway/per-session-router.js';
import { VirtualServer, upstreamStatus, type UpstreamEntry } from './gateway/virtual-server.js';
import { registerHealth } from './http/health.js';
import { LATEST_VERSION } from './jsonrpc/versions.js';
import { createLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { MemorySessionStore } from './session/memory-store.js';
import { RedisSessionStore } from './session/redis-store.js';
import { createReplication } from './session/replication.js';
import type { SessionStore } from './session/session-store.js';
import { createOriginCheck } from './transport/origin.js';
import { SessionStreams } from './transport/session-streams.js';
import { registerStreamableHttp } from './transport/streamable-http.js';
import { UpstreamPool } from './upstream/pool.js';
import { SessionWorkers } from './upstream/session-workers.js';
import { StdioUpstream } from './upstream/stdio.js';
import type { ClientIdentity, UpstreamPeer } from './upstream/upstream.js';

export const GATEWAY_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export interface BuildOptions {
  logger?: Logger;
  /** Collect Node's default process metrics (off in tests that build many apps). */
  defaultMetrics?: boolean;
}

export interface Gateway {
  app: FastifyInstance;
  server: VirtualServer;
  store: SessionStore;
  metrics: Metrics;
  log: Logger;
  /** Stops taking work, lets replies in flight finish (up to shutdown.drainMs), stops upstreams. */
  close(): Promise<void>;
}

function createStore(config: GatewayConfig, log: Logger): SessionStore {
  const { store, redisUrl, keyPrefix, ttlSeconds } = config.sessions;
  if (store === 'redis') {
    if (!redisUrl) throw new Error('sessions.redisUrl is required when sessions.store is "redis"');
    return new RedisSessionStore({ url: redisUrl, keyPrefix, ttlSeconds, log });
  }
  return new MemorySessionStore({ ttlSeconds });
}

interface Peers {
  shared(upstream: string): UpstreamPeer;
  perSession(upstream: string, scope: string): UpstreamPeer;
}

function createUpstream(u: UpstreamConfig, identity: ClientIdentity, log: Logger, metrics: Metrics, peers: Peers): UpstreamEntry {
  const common = { prefix: u.prefix ?? u.name, deadline: { timeoutMs: u.timeoutMs, maxTimeoutMs: u.maxTimeoutMs } };
  if (u.mode === 'per-session') {
    const workers = new SessionWorkers(
      u.name,
      u.pool,
      (clientIdentity, i, peer) => new StdioUpstream(u, clientIdentity, log, i, peer),
      (scope) => peers.perSession(u.name, scope),
      log,
      metrics,
    );
    return { ...common, mode: 'per-session', workers };
  }
  const pool = new UpstreamPool(u.name, u.pool, (i) => new StdioUpstream(u, identity, log, i, peers.shared(u.name)), log, metrics);
  return { ...common, mode: 'shared', pool };
}

/** Builds the whole gateway, upstreams started and catalog loaded, ready to listen. */
export async function buildApp(config: GatewayConfig, options: BuildOptions = {}): Promise<Gateway> {
  const log = options.logger ?? createLogger(config.logLevel);
  const metrics = new Metrics({ defaultMetrics: options.defaultMetrics });
  const identity: ClientIdentity = {
    clientInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
    // A shared worker serves many clients, so it is offered none of their capabilities.
    capabilities: {},
    protocolVersion: LATEST_VERSION,
  };

  const replication = createReplication(config, log);
  // The upstreams' peers call back into the server and router, which need the upstreams first.
  let server: VirtualServer | undefined;
  let router: PerSessionRouter | undefined;
  const peers: Peers = {
    shared: (upstream) => server!.sharedPeer(upstream),
    perSession: (upstream, scope) => router!.peer(upstream, scope),
  };
  const upstreams = new Map<string, UpstreamEntry>();
  for (const u of config.upstreams) upstreams.set(u.name, createUpstream(u, identity, log, metrics, peers));
  const perSessionUpstreams = new Map<string, PerSessionUpstream>();
  for (const [name, u] of upstreams) if (u.mode === 'per-session') perSessionUpstreams.set(name, { workers: u.workers, maxTimeoutMs: u.deadline.maxTimeoutMs });
  router = new PerSessionRouter({
    upstreams: perSessionUpstreams,
    bus: replication.bus,
    owners: replication.owners,
    log,
    onListChanged: (upstream, method) => server?.listChanged(upstream, method),
  });
  server = new VirtualServer({
    upstreams,
    perSession: router,
    // A probe of a per-session upstream offers every client capability, so no tool stays hidden.
    probeIdentity: { ...identity, capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
    serverInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
    pageSize: config.pagination.pageSize,
    log,
    metrics,
  });
  try {
    await router.start();
    await server.start();
  } catch (err) {
    await server.close();
    await replication.close();
    throw err;
  }

  const store = createStore(config, log);
  const streams = new SessionStreams(config.sse.keepAliveMs);
  let draining = false;
  const isDraining = () => draining;
  const isAllowedOrigin = createOriginCheck(config.security.allowedOrigins);

  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // One log line per request costs more than the request itself on the fast path.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.limits.bodyBytes,
    // close() runs after the drain: whatever is still open then is cut, so shutdown ends.
    forceCloseConnections: true,
  });
  await app.register(cors, {
    origin: (origin, cb) => cb(null, isAllowedOrigin(origin)),
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['content-type', 'accept', 'authorization', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'],
    exposedHeaders: ['mcp-session-id'],
  });
  registerHealth(app, {
    isDraining,
    metrics,
    upstreams: () => Object.fromEntries([...upstreams].map(([name, u]) => [name, upstreamStatus(u)])),
    store: store instanceof RedisSessionStore ? () => store.status() : undefined,
  });
  const transport = registerStreamableHttp(app, {
    path: config.path,
    bodyLimit: config.limits.bodyBytes,
    handler: server,
    store,
    streams,
    isAllowedOrigin,
    metrics,
    isDraining,
  });
  metrics.countSessions = () => store.size();
  server.onListChanged((method) => streams.broadcast({ jsonrpc: '2.0', method }));
  // Open SSE streams would keep fastify.close() waiting forever.
  app.addHook('preClose', async () => streams.closeAll());

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      const deadline = Date.now() + config.shutdown.drainMs;
      while (transport.activeReplies > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      await server.close();
      await replication.close();
      await app.close();
      await store.close();
    })();
    return closing;
  };

  return { app, server, store, metrics, log, close };
}
