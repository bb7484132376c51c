import { readFileSync } from 'node:fs';
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GatewayConfig, UpstreamConfig } from './config/schema.js';
import { VirtualServer, type UpstreamEntry } from './gateway/virtual-server.js';
import { registerHealth } from './http/health.js';
import { LATEST_VERSION } from './jsonrpc/versions.js';
import { createLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { MemorySessionStore } from './session/memory-store.js';
import type { SessionStore } from './session/session-store.js';
import { createOriginCheck } from './transport/origin.js';
import { SessionStreams } from './transport/session-streams.js';
import { registerStreamableHttp } from './transport/streamable-http.js';
import { UpstreamPool } from './upstream/pool.js';
import { StdioUpstream } from './upstream/stdio.js';
import type { ClientIdentity } from './upstream/upstream.js';

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

function createStore(config: GatewayConfig): SessionStore {
  return new MemorySessionStore({ ttlSeconds: config.sessions.ttlSeconds });
}

function createPool(u: UpstreamConfig, identity: ClientIdentity, log: Logger, metrics: Metrics): UpstreamPool {
  return new UpstreamPool(u.name, u.pool, (i) => new StdioUpstream(u, identity, log, i), log, metrics);
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

  const upstreams = new Map<string, UpstreamEntry>();
  for (const u of config.upstreams) {
    upstreams.set(u.name, {
      pool: createPool(u, identity, log, metrics),
      prefix: u.prefix ?? u.name,
      deadline: { timeoutMs: u.timeoutMs, maxTimeoutMs: u.maxTimeoutMs },
    });
  }
  const server = new VirtualServer({
    upstreams,
    serverInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
    pageSize: config.pagination.pageSize,
    log,
    metrics,
  });
  try {
    await server.start();
  } catch (err) {
    await server.close();
    throw err;
  }

  const store = createStore(config);
  const streams = new SessionStreams(config.sse.keepAliveMs);
  let draining = false;
  const isDraining = () => draining;
  const isAllowedOrigin = createOriginCheck(config.security.allowedOrigins);

  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // One log line per request costs more than the request itself on the fast path.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.limits.bodyBytes,
    forceCloseConnections: 'idle',
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
    upstreams: () => Object.fromEntries([...upstreams].map(([name, u]) => [name, u.pool.status()])),
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
  // Open SSE streams would keep fastify.close() waiting forever.
  app.addHook('preClose', async () => streams.closeAll());

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      const deadline = Date.now() + config.shutdown.drainMs;
      while (transport.activeReplies > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      await server.close();
      await app.close();
      await store.close();
    })();
    return closing;
  };

  return { app, server, store, metrics, log, close };
}
