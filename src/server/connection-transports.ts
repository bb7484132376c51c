import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../contracts/authenticator.js';
import type { Bus } from '../cluster/bus.js';
import { legacySseSettings, websocketSettings } from '../config/server.js';
import type { GatewayConfig } from '../config/schema.js';
import type { McpHandler } from '../contracts/mcp-handler.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionStore } from '../session/session-store.js';
import type { ClientByteRate } from '../transport/client-byte-rate.js';
import { Connections } from '../transport/connections.js';
import { LegacySseTransport } from '../transport/legacy-sse.js';
import { RequestDoor } from '../transport/request-door.js';
import { WebSocketTransport } from '../transport/websocket.js';

export interface ConnectionTransportParts {
  config: GatewayConfig;
  store: SessionStore;
  bus: Bus;
  diagnostics: DataPathEvents;
  isAllowedOrigin: (origin: string | undefined) => boolean;
  isReady: () => boolean;
  isDraining: () => boolean;
  auth?: Authenticator | undefined;
  bodyRate?: ClientByteRate | undefined;
}

/**
 * The client transports beside Streamable HTTP, as configured: legacy HTTP+SSE (`legacySse`) and
 * WebSocket (`websocket`), at /sse, /messages and /ws for the virtual server `handler`. Their
 * sessions held here (none when neither is on).
 */
export async function registerConnectionTransports(
  app: FastifyInstance,
  parts: ConnectionTransportParts,
  handler: McpHandler,
): Promise<Connections | undefined> {
  const { config, diagnostics } = parts;
  const legacy = legacySseSettings(config.legacySse);
  const ws = websocketSettings(config.websocket, config.limits.maxStreamBufferedBytes);
  if (!legacy && !ws) return undefined;
  const refreshMs = Math.min(60_000, Math.max(1000, Math.floor((config.sessions.ttlSeconds * 1000) / 3)));
  const connections = new Connections(parts.store, app.log, refreshMs, diagnostics);
  const door = new RequestDoor({
    isAllowedOrigin: parts.isAllowedOrigin,
    isReady: parts.isReady,
    auth: parts.auth,
    diagnostics,
    bodyRate: parts.bodyRate,
  });
  const intake = { maxDepth: config.limits.maxJsonDepth, maxBatch: config.limits.maxBatchSize };
  const common = {
    intake,
    maxInFlightPerClient: config.limits.maxInFlightPerClient,
    door,
    auth: parts.auth,
    connections,
    diagnostics,
    isDraining: parts.isDraining,
  };
  const { maxStreams, maxStreamBufferedBytes } = config.limits;
  const sse =
    legacy &&
    new LegacySseTransport({
      ...common,
      settings: legacy,
      bodyLimit: config.limits.bodyBytes,
      maxStreams,
      maxStreamBufferedBytes,
      keepAliveMs: config.sse.keepAliveMs,
      bus: parts.bus,
    });
  if (sse) sse.register(app, '', handler);
  if (ws) {
    const socket = new WebSocketTransport({ ...common, settings: ws, maxPayload: config.limits.bodyBytes });
    // The WebSocket plugin hooks every request of the instance it is registered on (onRequest and
    // onResponse, to mark upgrades): in a scope of its own with the /ws route, the POSTs of the
    // MCP endpoint don't run them.
    await app.register(async (plugin) => {
      await WebSocketTransport.plugin(plugin, config.limits.bodyBytes, diagnostics);
      socket.register(plugin, '', handler);
    });
  }
  // Before the streams close: every connection hangs up, and its session ends with it.
  app.addHook('preClose', async () => {
    connections.closeAll('the gateway is shutting down');
    connections.stop();
  });
  return connections;
}
