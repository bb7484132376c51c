// Wiring only: the Fastify app of one gateway, its hooks and routes in the order they must run.
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GatewayConfig, UpstreamConfig } from './config/schema.js';
import type { ConfigStatus } from './config/reload-state.js';
import type { VirtualServer } from './gateway/virtual-server.js';
import type { ListenStreams } from './stateless/listen-streams.js';
import type { DataPathEvents } from './observability/events.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import { registerAccessLog, requestIdOptions } from './server/access-log.js';
import { lazyChildLoggerFactory } from './server/lazy-request-logger.js';
import { createAuthenticator, registerProtectedResourceMetadata } from './server/auth/authenticator.js';
import { registerConnectionTransports } from './server/connection-transports.js';
import { legacySseSettings, websocketSettings } from './config/server.js';
import type { Connections } from './transport/connections.js';
import { registerEndpointMethods } from './server/endpoint-methods.js';
import { registerHealth } from './server/health.js';
import { registerMcpEndpoints } from './server/mcp-endpoints.js';
import { ClientByteRate } from './transport/client-byte-rate.js';
import { registerOAuthRoutes } from './server/oauth-routes.js';
import { frameworkErrors, registerRouteErrors } from './server/route-errors.js';
import { registerRootPointer } from './server/root-pointer.js';
import { registerCardNotFound, registerServerCards } from './server/server-cards.js';
import type { TokenStore } from './contracts/token-store.js';
import { createOriginCheck } from './server/origin.js';
import { capConnections, serverOptions } from './server/server-limits.js';
import { registerStatusPage } from './server/status/page.js';
import type { Bus } from './cluster/bus.js';
import type { RedisStoreStatus } from './session/redis-store.js';
import type { SessionStore } from './session/session-store.js';
import type { SessionStreams } from './streams/session-streams.js';
import type { StreamableHttpTransport } from './transport/streamable-http.js';
import type { PoolStatus } from './upstream/worker-set.js';
import { statusSources } from './status-sources.js';
import type { QuotaReport } from './quota/quotas.js';
import { GATEWAY_VERSION } from './version.js';

export interface HttpParts {
  config: GatewayConfig;
  log: Logger;
  metrics: Metrics;
  diagnostics: DataPathEvents;
  server: VirtualServer;
  store: SessionStore;
  bus: Bus;
  storeStatus: (() => RedisStoreStatus) | undefined;
  streams: SessionStreams;
  listens: ListenStreams;
  upstreamStatus: () => Record<string, PoolStatus>;
  /** Live: a reload changes them in place. */
  required: Set<string>;
  intake: { maxDepth: number; maxBatch: number };
  isDraining: () => boolean;
  isReady: () => boolean;
  configStatus: ConfigStatus;
  inputChains: () => number;
  /** Each quota's window and top consumers (/status). */
  quotas: () => Promise<QuotaReport[]>;
  /** Tokens held for users (grant authorization-code's /oauth/* routes need them). */
  tokens?: TokenStore | undefined;
  /** The upstreams that run now (a reload replaces them); default: the start-up config's. */
  upstreams?: () => readonly UpstreamConfig[];
}

export interface HttpApp {
  app: FastifyInstance;
  transport: Pick<StreamableHttpTransport, 'activeReplies' | 'setLimits'>;
  unsubscribe: () => void;
  /** The WebSocket and legacy HTTP+SSE sessions held here (none when neither transport is on). */
  connections: Connections | undefined;
}

/** Fastify's own options: the logger, body limit, request ids, server limits and framework errors. */
function fastifyOptions({ config, log, diagnostics }: HttpParts) {
  return {
    loggerInstance: log as FastifyBaseLogger,
    // One log line per request costs more than the request itself on the fast path.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit: config.limits.bodyBytes,
    // close() runs after the drain: whatever is still open then is cut, so shutdown ends.
    forceCloseConnections: true,
    ...requestIdOptions(),
    ...serverOptions(config.server, diagnostics, log),
    frameworkErrors: frameworkErrors(diagnostics, config.limits.bodyBytes),
  };
}

/** The Fastify app: server limits, CORS, health, OAuth metadata and the MCP endpoint. Nothing listens yet. */
export async function createHttp(parts: HttpParts): Promise<HttpApp> {
  const { config, log, metrics, diagnostics } = parts;
  const isAllowedOrigin = createOriginCheck(config.security.allowedOrigins);
  const app = Fastify(fastifyOptions(parts));
  // First: every route's reply carries the request id, and every request gets its access line.
  const unsubscribe = registerAccessLog(app, diagnostics.gateway, log);
  capConnections(app.server, config.server.maxConnections, diagnostics, log);
  // Ahead of endpoint-methods.ts's hook, which would answer a card path nobody serves with the generic 404.
  registerCardNotFound(app, config, diagnostics);
  // Before CORS, which would answer a bad preflight in its own terms; the rest of Fastify's own answers too.
  registerEndpointMethods(app, { paths: [config.path, ...parts.server.serverPaths], isAllowedOrigin, diagnostics });
  registerRouteErrors(app, diagnostics, config.limits.bodyBytes);
  await app.register(cors, {
    origin: (origin, cb) => cb(null, isAllowedOrigin(origin)),
    methods: ['GET', 'POST', 'DELETE'],
    // Not listed: the request's own (preflight) header list is allowed, origin permitting, since
    // 2026-07-28 clients send Mcp-Param-* headers whose names come from tool schemas.
    // One string, not a list: @fastify/cors joins a list again on every request.
    exposedHeaders: 'mcp-session-id, www-authenticate, x-request-id, etag',
  });
  registerHealth(app, {
    required: parts.required,
    isDraining: parts.isDraining,
    isStarted: parts.isReady,
    metrics,
    upstreams: parts.upstreamStatus,
    store: parts.storeStatus,
  });
  registerRootPointer(app, {
    version: GATEWAY_VERSION,
    path: config.path,
    serverPaths: parts.server.serverPaths,
    legacySse: legacySseSettings(config.legacySse)?.ssePath,
    websocket: websocketSettings(config.websocket, config.limits.maxStreamBufferedBytes)?.path,
    status: config.status.enabled,
    serverCards: config.serverCards.enabled,
  });
  registerProtectedResourceMetadata(app, config.auth);
  const authenticator = createAuthenticator(config.auth, log, diagnostics);
  // One share per client whatever transport its bodies come by.
  const bodyRate = new ClientByteRate(config.limits.maxBodyBytesPerSecondPerClient, config.limits.bodyBytes);
  const transport = registerMcpEndpoints(app, {
    bodyRate,
    config,
    intake: parts.intake,
    server: parts.server,
    store: parts.store,
    streams: parts.streams,
    listens: parts.listens,
    isAllowedOrigin,
    diagnostics,
    isDraining: parts.isDraining,
    isReady: parts.isReady,
    authenticator,
  });
  registerOAuthRoutes(app, {
    upstreams: parts.upstreams ?? (() => config.upstreams),
    tokens: parts.tokens,
    auth: authenticator,
    login: { browserLogin: config.auth.browserLogin, resource: config.auth.resource },
    diagnostics,
    notify: (session, message) => void parts.streams.send(session, message),
  });
  registerStatusPage(app, {
    config: config.status,
    diagnostics,
    sources: statusSources({ ...parts, version: GATEWAY_VERSION, activeReplies: () => transport.activeReplies }),
    ...(authenticator ? { auth: authenticator } : {}),
  });
  registerServerCards(app, { ...parts, auth: authenticator, version: GATEWAY_VERSION });
  // Legacy HTTP+SSE and WebSocket (at /sse, /messages, /ws), for the main endpoint only: their
  // sessions know no virtual server (servers[]) and its admission, so none is mounted on a server's path.
  const connections = await registerConnectionTransports(
    app,
    {
      config,
      store: parts.store,
      bus: parts.bus,
      diagnostics,
      isAllowedOrigin,
      isReady: parts.isReady,
      isDraining: parts.isDraining,
      auth: authenticator,
      bodyRate,
    },
    parts.server,
  );
  // Open SSE streams would keep fastify.close() waiting forever.
  app.addHook('preClose', async () => {
    parts.listens.closeAll();
    parts.streams.closeAll();
  });
  return { app, transport, unsubscribe, connections };
}
