// The MCP endpoints of one app: the main path (the whole catalog) and one per virtual server
// (servers[]), each a Streamable HTTP transport over the virtual server's view for its path.
// They share the replica's bounds, so a client's requests in flight and the open streams count
// once whatever path they came by.
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config/schema.js';
import type { Authenticator } from '../contracts/authenticator.js';
import type { McpHandler } from '../contracts/mcp-handler.js';
import type { VirtualServer } from '../gateway/virtual-server.js';
import type { ListenStreams } from '../stateless/listen-streams.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionStore } from '../session/session-store.js';
import type { SessionStreams } from '../streams/session-streams.js';
import type { ClientByteRate } from '../transport/client-byte-rate.js';
import { InFlightLimit } from '../transport/in-flight-limit.js';
import { StreamRoom } from '../transport/stream-room.js';
import {
  registerStreamableHttp,
  type StreamableHttpOptions,
  type StreamableHttpTransport,
} from '../transport/streamable-http.js';

export interface McpEndpointsOptions {
  config: GatewayConfig;
  /** limits.maxJsonDepth and maxBatchSize: a reload changes them in place. */
  intake: { maxDepth: number; maxBatch: number };
  server: VirtualServer;
  store: SessionStore;
  streams: SessionStreams;
  listens: ListenStreams;
  isAllowedOrigin: (origin: string | undefined) => boolean;
  diagnostics: DataPathEvents;
  isDraining: () => boolean;
  isReady: () => boolean;
  authenticator: Authenticator | undefined;
  bodyRate: ClientByteRate;
}

/** Registers every endpoint (the caller registers their refusals of other methods before CORS: endpoint-methods.ts). */
export function registerMcpEndpoints(
  app: FastifyInstance,
  options: McpEndpointsOptions,
): Pick<StreamableHttpTransport, 'activeReplies' | 'setLimits'> {
  const { config, diagnostics, authenticator, isAllowedOrigin } = options;
  const room = new StreamRoom(config.limits.maxStreams, diagnostics, config.limits.maxStreamBufferedBytes);
  const bounds = { inFlight: new InFlightLimit(config.limits.maxInFlightPerClient), room };
  const endpoint = (path: string, handler: McpHandler, server?: StreamableHttpOptions['server']) =>
    registerStreamableHttp(app, {
      path,
      bodyLimit: config.limits.bodyBytes,
      intake: options.intake,
      maxInFlightPerClient: config.limits.maxInFlightPerClient,
      maxStreams: config.limits.maxStreams,
      maxStreamBufferedBytes: config.limits.maxStreamBufferedBytes,
      handler,
      store: options.store,
      streams: options.streams,
      listens: options.listens,
      isAllowedOrigin,
      diagnostics,
      isDraining: options.isDraining,
      isReady: options.isReady,
      ...(authenticator ? { auth: authenticator } : {}),
      ...(server ? { server } : {}),
      bounds,
      bodyRate: options.bodyRate,
    });
  const transports = [endpoint(config.path, options.server)];
  for (const path of options.server.serverPaths) {
    const handler = options.server.forServer(path);
    transports.push(endpoint(path, handler, { path, admit: (identity) => handler.admit(identity) }));
  }
  return {
    get activeReplies() {
      return transports.reduce((n, t) => n + t.activeReplies, 0);
    },
    // The bounds are shared: setting them once sets every endpoint's.
    setLimits: (limits) => {
      bounds.inFlight.limit = limits.maxInFlightPerClient;
      bounds.room.max = limits.maxStreams;
      options.bodyRate.rate = limits.maxBodyBytesPerSecondPerClient;
    },
  };
}
