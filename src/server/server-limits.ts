import { readFileSync } from 'node:fs';
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyServerOptions } from 'fastify';
import type { ServerConfig } from '../config/schema.js';
import { GatewayError, type ErrorName } from '../jsonrpc/errors.js';
import { rawErrorReply } from '../transport/error-reply.js';
import type { Logger } from '../observability/logger.js';
import type { DataPathEvents } from '../observability/events.js';

/**
 * File descriptors kept for what is not a client connection (upstream pipes and sockets, Redis, files), at most a
 * quarter of the limit.
 */
const RESERVED_FDS = 256;

type TimeoutOptions = Pick<
  FastifyServerOptions,
  'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout' | 'clientErrorHandler'
> & {
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
};

/**
 * The HTTP server's timeouts, as Fastify options. Node applies the headers and request timeouts
 * only while a request is being received (counted from the connection for its first request,
 * so a socket that sends nothing is closed too); a reply being written, such as an SSE stream,
 * is never cut by them. The socket inactivity timeout stays off for the same reason: a call
 * may rightly be silent for as long as its upstream takes.
 */
export function serverOptions(config: ServerConfig, diagnostics: DataPathEvents, log: Logger): TimeoutOptions {
  return {
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: 0,
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // Node looks for expired requests every 30 s by default: a stalled socket would outlive its timeout by that much.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 2))),
    },
    clientErrorHandler: (err, socket) => answerClientError(err, socket, diagnostics, log),
  };
}

/**
 * What Node answers itself, before any route runs (a request that timed out, headers too large,
 * bytes that are not HTTP), answered as JSON-RPC like every other refusal, then the socket is
 * closed: whoever sent it cannot be trusted to close it.
 */
function answerClientError(err: ConnectionError, socket: Socket, diagnostics: DataPathEvents, log: Logger): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const type: ErrorName =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'REQUEST_TIMEOUT'
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? 'HEADERS_TOO_LARGE'
        : 'INVALID_REQUEST';
  const started = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
  // A reply already under way on this socket cannot be followed by another: just end it.
  if (!socket.writable || started) {
    socket.destroy();
    return;
  }
  diagnostics.emit('transport:rejection', { errorType: type });
  log.debug({ code: err.code, type }, 'client error: connection closed');
  const message =
    type === 'INVALID_REQUEST' ? 'Invalid Request: the bytes received are not an HTTP request' : undefined;
  socket.end(rawErrorReply(new GatewayError(type, message)), () => socket.destroy());
}

/**
 * Caps open connections on this replica (Node's `maxConnections`: one past the cap is closed as
 * soon as it is accepted, before a byte is read). A cap the open-file limit could not hold is
 * lowered to what it can, since running out of descriptors fails every socket, health probes
 * and upstreams included, not only the newest one.
 */
export function capConnections(server: Server, configured: number, diagnostics: DataPathEvents, log: Logger): number {
  const limit = openFileLimit();
  let max = configured;
  if (limit !== undefined) {
    const usable = limit - Math.min(RESERVED_FDS, Math.floor(limit / 4));
    if (configured > usable) {
      max = Math.max(1, usable);
      log.warn(
        { configured, openFileLimit: limit, maxConnections: max },
        'server.maxConnections lowered to fit the open-file limit',
      );
    }
  }
  server.maxConnections = max;
  server.on('drop', () => diagnostics.emit('connection:refused', {}));
  return max;
}

/** The soft RLIMIT_NOFILE, where the platform tells it (Linux); undefined elsewhere or when unlimited. */
function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}
