import type { FastifyBaseLogger } from 'fastify';
import type { Authenticator, Identity } from '../contracts/authenticator.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import type { McpHandler } from '../contracts/mcp-handler.js';
import { GatewayError, errorObject, errorResponse, type ErrorName } from '../jsonrpc/errors.js';
import type { Classified, JsonRpcId, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/messages.js';
import { paramsProblem } from '../jsonrpc/params-schemas.js';
import { CONNECTION_ONLY_VERSION, allowsBatch } from '../jsonrpc/versions.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionRecord } from '../session/session-store.js';
import type { InFlightLimit } from './in-flight-limit.js';
import { readMessages, type Intake, type IntakeLimits } from './message-intake.js';
import type { SessionManager } from './session-manager.js';

export interface ClientConnectionOptions {
  handler: McpHandler;
  sessions: SessionManager;
  inFlight: InFlightLimit;
  intake: IntakeLimits;
  diagnostics: DataPathEvents;
  log: FastifyBaseLogger;
  /** With auth on: who opened the connection, and the authenticator that asks what they may call. */
  identity?: Identity | undefined;
  auth?: Authenticator | undefined;
  /**
   * Whether one unit of input (a legacy POST body) may be a batch, where the session's version
   * allows it; a WebSocket frame is one message, never a batch.
   */
  batches: boolean;
  /** This replica is shutting down: new requests are refused (SHUTTING_DOWN), those in flight still answered. */
  isDraining?: () => boolean;
  /** Counts the requests in flight, which a shutdown lets finish (up to shutdown.drainMs). */
  requests?: InFlightCount;
}

/** Requests being served: one began, one was answered. */
export interface InFlightCount {
  began(): void;
  ended(): void;
}

/**
 * One session of a connection-shaped client transport (legacy HTTP+SSE, WebSocket): every
 * message the client sends comes in through `receive`/`accept`, every message for the client
 * (responses, progress, server-to-client requests, notifications) goes out through one `wire`.
 * The session exists before initialize (its connection opened it); initialize fills in what the
 * client said, and nothing but ping is served before it.
 *
 * The door checks are those of Streamable HTTP (message-intake: depth, batch size, JSON; params
 * schemas; the in-flight limit per session; per-tool scopes), but a refusal is a JSON-RPC error
 * on the wire rather than an HTTP status: the connection survives it.
 */
export class ClientConnection {
  readonly session: SessionRecord;
  readonly #wire: MessageSink;
  readonly #options: ClientConnectionOptions;
  readonly #mayCall: ((tool: string) => boolean) | undefined;
  #ctx: RequestContext;
  #initialized = false;
  #closed = false;

  constructor(session: SessionRecord, wire: MessageSink, options: ClientConnectionOptions) {
    this.session = session;
    this.#options = options;
    // A closed connection takes nothing more: late answers of requests in flight are dropped.
    this.#wire = { send: (m) => !this.#closed && wire.send(m) };
    this.#mayCall = options.identity && options.auth ? options.auth.toolPolicy(options.identity) : undefined;
    this.#ctx = this.#context();
  }

  get handler(): McpHandler {
    return this.#options.handler;
  }

  /** A message no request asked for (list_changed): false when not sent (closed, or not initialized yet). */
  notify(message: JsonRpcMessage): boolean {
    return this.#initialized && this.#wire.send(message);
  }

  /** The connection is gone: nothing more is sent or served. */
  close(): void {
    this.#closed = true;
  }

  /** One unit of input as the client sent it (a frame, a POST body). */
  receive(text: string): void {
    let intake: Intake;
    try {
      intake = readMessages(text, this.#options.intake);
    } catch (err) {
      if (err instanceof GatewayError) return this.#refuse(null, err.type, err.message);
      throw err;
    }
    this.accept(intake);
  }

  /** Messages already read (the POST's replica checked them): notifications and responses first, then requests. */
  accept({ batch, messages }: Intake): void {
    if (this.#closed) return;
    if (batch && !this.#options.batches)
      return this.#refuse(null, 'INVALID_REQUEST', 'Invalid Request: one JSON-RPC message per frame (no batches)');
    if (batch && !allowsBatch(this.session.protocolVersion)) {
      return this.#refuse(
        null,
        'BATCH_NOT_SUPPORTED',
        `Batch requests are not supported by protocol version ${this.session.protocolVersion}`,
      );
    }
    for (const c of messages) if (c.kind === 'notification' || c.kind === 'response') this.#notify(c);
    for (const c of messages) {
      if (c.kind === 'invalid') this.#refuse(c.id, 'INVALID_REQUEST', `Invalid Request: ${c.reason}`);
      else if (c.kind === 'request') this.#request(c.message);
    }
  }

  #notify(c: Classified): void {
    if (c.kind === 'response') return this.#options.handler.handleResponse(this.#ctx, c.message);
    if (c.kind !== 'notification') return;
    // Nothing answers a notification: one that does not hold is skipped (and counted).
    if (paramsProblem(c.message.method, c.message.params))
      return this.#options.diagnostics.emit('transport:rejection', { errorType: 'INVALID_PARAMS' });
    if (c.message.method === 'notifications/initialized')
      this.#options.sessions.markInitialized(this.session, this.#options.log);
    this.#options.handler.handleNotification(this.#ctx, c.message);
  }

  #request(message: JsonRpcRequest): void {
    const problem = paramsProblem(message.method, message.params);
    if (problem) return this.#refuse(message.id, 'INVALID_PARAMS', `Invalid params: ${problem}`);
    if (message.method === 'initialize') return void this.#initialize(message);
    if (!this.#initialized && message.method !== 'ping')
      return this.#refuse(
        message.id,
        'INVALID_REQUEST',
        'Invalid Request: the session is not initialized (send initialize first)',
      );
    const { identity, auth, inFlight, requests } = this.#options;
    if (this.#options.isDraining?.()) return this.#refuse(message.id, 'SHUTTING_DOWN', 'Gateway is shutting down');
    if (identity && auth && message.method === 'tools/call' && typeof message.params?.name === 'string') {
      try {
        auth.authorizeTool(identity, message.params.name);
      } catch (err) {
        if (err instanceof GatewayError) return this.#refuse(message.id, err.type, err.message);
        throw err;
      }
    }
    const client = this.session.id;
    if (!inFlight.acquire(client, message.method)) {
      return this.#refuse(
        message.id,
        'CLIENT_TOO_MANY_IN_FLIGHT',
        `Too many requests in flight for this session (limit ${inFlight.limit}): wait for answers before sending more`,
      );
    }
    requests?.began();
    this.#options.handler.handleRequest(this.#ctx, message).then(
      (r) => {
        inFlight.release(client);
        requests?.ended();
        this.#wire.send(r);
      },
      (err: unknown) => {
        inFlight.release(client);
        requests?.ended();
        this.#options.log.error({ err, method: message.method }, 'request handler failed');
        this.#wire.send(errorResponse(message.id, errorObject('INTERNAL_ERROR')) as JsonRpcResponse);
      },
    );
  }

  async #initialize(message: JsonRpcRequest): Promise<void> {
    if (this.#initialized)
      return this.#refuse(message.id, 'INVALID_REQUEST', 'Invalid Request: the session is initialized already');
    this.#initialized = true;
    const params = message.params ?? {};
    let { protocolVersion, result } = this.#options.handler.initialize(params);
    if (params.protocolVersion === CONNECTION_ONLY_VERSION) {
      protocolVersion = CONNECTION_ONLY_VERSION;
      result = { ...result, protocolVersion };
    }
    const clientInfo =
      typeof params.clientInfo === 'object' && params.clientInfo !== null
        ? (params.clientInfo as SessionRecord['clientInfo'])
        : undefined;
    const clientCapabilities =
      typeof params.capabilities === 'object' && params.capabilities !== null
        ? (params.capabilities as Record<string, unknown>)
        : {};
    // The record here changes at once (what follows initialize sees it); the store's copy after.
    const stored = this.#options.sessions.initialize(
      this.session,
      { protocolVersion, clientCapabilities, clientInfo },
      this.#options.log,
    );
    this.#ctx = this.#context();
    try {
      await stored;
    } catch (err) {
      if (err instanceof GatewayError) return this.#refuse(message.id, err.type, err.message);
      throw err;
    }
    this.#options.log.info(
      {
        session: this.session.id,
        client: clientInfo?.name,
        version: protocolVersion,
        transport: this.session.transport,
      },
      'session initialized',
    );
    this.#wire.send({ jsonrpc: '2.0', id: message.id, result });
  }

  #context(): RequestContext {
    const s = this.session;
    return {
      protocolVersion: s.protocolVersion,
      clientCapabilities: s.clientCapabilities,
      clientInfo: s.clientInfo,
      principal: s.principal,
      // The connection's token (from its upgrade, or its stream's GET): an upstream that acts for users calls as them.
      caller: this.#options.identity?.caller,
      mayCall: this.#mayCall,
      logLevel: s.logLevel,
      setLogLevel: (level) => this.#setLogLevel(level),
      foundTools: s.foundTools,
      setFoundTools: (names) => this.#setFoundTools(names),
      stateless: false,
      scope: s.id,
      endpoint: s.server,
      // One stream carries everything: replies and the session's own messages alike.
      sink: this.#wire,
      sessionSink: this.#wire,
      client: s.id,
      slots: this.#options.inFlight,
    };
  }

  #setLogLevel(level: string): Promise<void> {
    const kept = this.#options.sessions.setLogLevel(this.session, level, this.#options.log);
    // The connection's next requests carry the new level.
    this.#ctx = this.#context();
    return kept;
  }

  #setFoundTools(names: readonly string[]): Promise<void> {
    const kept = this.#options.sessions.setFoundTools(this.session, names, this.#options.log);
    this.#ctx = this.#context();
    return kept;
  }

  /** An error of the table on the wire, about request `id` (null: about no request in particular). */
  #refuse(id: JsonRpcId | null, type: ErrorName, message: string): void {
    this.#options.diagnostics.emit('transport:rejection', { errorType: type });
    this.#wire.send(errorResponse(id, new GatewayError(type, message).toJsonRpc()) as JsonRpcMessage);
  }
}
