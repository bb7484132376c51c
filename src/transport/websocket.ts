import websocketPlugin, { type WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../contracts/authenticator.js';
import type { WebSocketSettings } from '../config/schema.js';
import type { McpHandler } from '../contracts/mcp-handler.js';
import { CONNECTION_ONLY_VERSION } from '../jsonrpc/versions.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionRecord } from '../session/session-store.js';
import { ClientConnection } from './client-connection.js';
import type { Connections } from './connections.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { Rejection, rawErrorReply, replyWithFailure } from './error-reply.js';
import { InFlightLimit } from './in-flight-limit.js';
import type { IntakeLimits } from './message-intake.js';
import type { RequestDoor } from './request-door.js';
import { PacedFrames } from './paced-frames.js';
import { WebSocketSender } from './websocket-sender.js';
import type { RawData } from 'ws';

export interface WebSocketOptions {
  settings: WebSocketSettings;
  /** The largest frame (and message) a client may send: the HTTP body limit. */
  maxPayload: number;
  intake: IntakeLimits;
  maxInFlightPerClient: number;
  door: RequestDoor;
  auth?: Authenticator | undefined;
  connections: Connections;
  diagnostics: DataPathEvents;
  isDraining: () => boolean;
}

/** The subprotocol MCP clients ask for (the SDK's WebSocketClientTransport). */
export const SUBPROTOCOL = 'mcp';

/** Close codes (RFC 6455 §7.4.1) the gateway ends a connection with. */
export const CLOSE = {
  /** Shutdown, or the session expired. */
  GOING_AWAY: 1001,
  /** The client let more than `maxBufferedBytes` pile up unread (limits.maxStreamBufferedBytes). */
  SLOW_READER: 1008,
} as const;

/** Once a connection is cut, how long its close handshake may take before the socket is destroyed. */
const CUT_OFF_MS = 1000;

/**
 * MCP over WebSocket: one JSON-RPC message per text message, both ways; one session per
 * connection, opened by the upgrade (after the same door as HTTP: Origin, readiness, the
 * Authorization header) and ended when it closes. Frames larger than the HTTP body limit end the
 * connection (1009, ws's maxPayload); a frame that is not JSON is answered with a parse error and
 * the connection goes on. A client that does not read what it is sent is cut off (1008) once
 * more than `maxBufferedBytes` wait for it; one that stops answering pings is ended.
 */
export class WebSocketTransport {
  readonly #options: WebSocketOptions;
  readonly #inFlight: InFlightLimit;
  /** The sessions opened by upgrades that passed the door, until their handler runs. */
  readonly #opening = new WeakMap<FastifyRequest, SessionRecord>();

  constructor(options: WebSocketOptions) {
    this.#options = options;
    this.#inFlight = new InFlightLimit(options.maxInFlightPerClient);
  }

  /** The ws server on `app`, once (before any route of register). */
  static async plugin(app: FastifyInstance, maxPayload: number, diagnostics: DataPathEvents): Promise<void> {
    await app.register(websocketPlugin, {
      options: {
        maxPayload,
        // Clients that ask for subprotocols must be offered mcp; one that asks for none is served too.
        handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
      },
      // The registry hangs up every connection on shutdown (ending their sessions).
      preClose: (done) => done(),
    });
    // An upgrade ws refuses (no or a bad Sec-WebSocket-Key, another version, a malformed
    // subprotocol list) it would answer in plain text. The session #prepare opened goes with the socket.
    app.websocketServer.on('wsClientError', (err, socket) => {
      if (socket.destroyed) return;
      diagnostics.emit('transport:rejection', { errorType: 'INVALID_REQUEST' });
      const message = `Invalid Request: not a WebSocket handshake this endpoint takes (${err.message})`;
      const refusal = new GatewayError('INVALID_REQUEST', message);
      socket.end(rawErrorReply(refusal, { 'sec-websocket-version': '13' }), () => socket.destroy());
    });
  }

  /** The endpoint under `basePath` ('' for the root) for the virtual server `handler`; call again per base path. */
  register(app: FastifyInstance, basePath: string, handler: McpHandler): this {
    const { door, diagnostics } = this.#options;
    void app.register(async (plugin) => {
      plugin.addHook('onRequest', (request, reply, done) => door.admit(request, reply, done));
      plugin.addHook('preHandler', (request, reply) => this.#prepare(request, reply));
      plugin.route({
        method: 'GET',
        url: basePath + this.#options.settings.path,
        exposeHeadRoute: false,
        handler: (_request, reply) => replyWithFailure(reply, diagnostics, new Rejection('UPGRADE_REQUIRED')),
        wsHandler: (socket, request) => this.#serve(socket, request, handler),
      });
    });
    return this;
  }

  /** Before the upgrade: the session (limits apply here, refused as HTTP). */
  async #prepare(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (!request.ws) return undefined;
    try {
      if (this.#options.isDraining()) throw new Rejection('SHUTTING_DOWN');
      const principal = this.#options.door.identityOf(request)?.principal;
      const session = await this.#options.connections.sessions.create(
        {},
        CONNECTION_ONLY_VERSION,
        principal,
        null,
        request.log,
        'websocket',
      );
      // Gone while the store made the session, the socket will not close again: forget it now.
      if (request.raw.socket.destroyed) return void this.#options.connections.sessions.forget(session, request.log);
      this.#opening.set(request, session);
      // A handshake that never completes (the client went away) leaves no session behind.
      request.raw.socket.once('close', () => {
        if (this.#opening.delete(request)) this.#options.connections.sessions.forget(session, request.log);
      });
      return undefined;
    } catch (err) {
      replyWithFailure(reply, this.#options.diagnostics, err);
      return reply;
    }
  }

  #serve(socket: WebSocket, request: FastifyRequest, handler: McpHandler): void {
    const o = this.#options;
    const session = this.#opening.get(request);
    if (!session) return void socket.terminate();
    this.#opening.delete(request);
    const bound = o.settings.maxBufferedBytes;
    const sender = new WebSocketSender(socket);
    const connection = new ClientConnection(
      session,
      {
        send: (message) => {
          if (socket.readyState !== socket.OPEN) return false;
          // As an SSE stream: what is still unsent before this message counts, not this message.
          if (socket.bufferedAmount > bound) {
            this.#cutOff(socket, CLOSE.SLOW_READER, `too slow: more than ${bound} bytes unread`);
            return false;
          }
          sender.send(JSON.stringify(message));
          return true;
        },
      },
      {
        handler,
        sessions: o.connections.sessions,
        inFlight: this.#inFlight,
        intake: o.intake,
        diagnostics: o.diagnostics,
        log: request.log,
        identity: o.door.identityOf(request),
        auth: o.auth,
        batches: false,
        isDraining: o.isDraining,
        requests: o.connections,
      },
    );
    o.connections.hold({ connection, hangUp: (reason) => this.#cutOff(socket, CLOSE.GOING_AWAY, reason) });
    o.diagnostics.emit('stream:open', { kind: 'websocket' });
    let alive = true;
    const ping = setInterval(() => {
      if (!alive) return void socket.terminate();
      alive = false;
      socket.ping();
    }, o.settings.pingIntervalMs);
    socket.on('pong', () => {
      alive = true;
    });
    // Frames count against the client's byte share as POST bodies do, paced instead of refused.
    const frames = new PacedFrames<{ data: RawData; isBinary: boolean }>(
      socket,
      (frame) => o.door.debitFrame(request, frame ? frameBytes(frame.data) : 0),
      ({ data, isBinary }) => {
        if (isBinary) {
          o.diagnostics.emit('transport:rejection', { errorType: 'INVALID_REQUEST' });
          connection.accept({
            batch: false,
            messages: [{ kind: 'invalid', id: null, reason: 'binary frame: send one JSON-RPC message per text frame' }],
          });
          return;
        }
        connection.receive(data.toString());
      },
    );
    socket.on('message', (data, isBinary) => frames.push({ data, isBinary }));
    socket.on('error', (err) => request.log.warn({ err }, 'websocket error'));
    socket.once('close', (code) => {
      clearInterval(ping);
      frames.close();
      o.diagnostics.emit('stream:close', { kind: 'websocket' });
      request.log.info({ session: session.id, code }, 'websocket closed');
      o.connections.end(connection);
    });
  }

  /**
   * Closes with `code`; a client that does not read will not see the close frame either, so the socket goes soon after.
   */
  #cutOff(socket: WebSocket, code: number, reason: string): void {
    if (socket.readyState === socket.CLOSED || socket.readyState === socket.CLOSING) return;
    if (code === CLOSE.SLOW_READER) this.#options.diagnostics.emit('stream:cut-off', { kind: 'websocket' });
    socket.close(code, reason.slice(0, 120));
    setTimeout(() => socket.terminate(), CUT_OFF_MS).unref();
  }
}

/** A frame's size in bytes, whichever of ws's shapes it came in. */
function frameBytes(data: RawData): number {
  return Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
}
