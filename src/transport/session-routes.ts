// What only a 2025 session has on a Streamable HTTP endpoint: initialize opening it, the context
// its requests carry, the notifications and responses of its POSTs, GET (its stream of messages
// outside any request, or a stream resumed by Last-Event-ID) and DELETE ending it.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { McpHandler } from '../contracts/mcp-handler.js';
import type { Caller, HttpOrigin, MessageSink, RequestContext } from '../contracts/request-context.js';
import type { Classified, JsonRpcRequest } from '../jsonrpc/messages.js';
import { paramsProblem } from '../jsonrpc/params-schemas.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionRecord } from '../session/session-store.js';
import { GET_STREAM, parseEventId } from '../streams/event-id.js';
import type { SessionStreams } from '../streams/session-streams.js';
import { checkVersionHeader, namesStatelessEra } from './era-routing.js';
import { Rejection } from './error-reply.js';
import { SESSION_HEADER, VERSION_HEADER, acceptsSse, header, httpOrigin, primesStreams } from './http-headers.js';
import type { InFlightLimit } from './in-flight-limit.js';
import type { RequestDoor } from './request-door.js';
import type { SessionManager } from './session-manager.js';
import type { StreamRoom } from './stream-room.js';

/** The endpoint's parts these routes use (StreamableHttpTransport's). */
export interface SessionRouteParts {
  handler: McpHandler;
  /** The replica's in-flight places, the session's requests' `slots`. */
  inFlight: InFlightLimit;
  /** The app's logger, once the routes are registered. */
  log: () => FastifyBaseLogger | undefined;
  /** true once shutdown began: no new stream opens. */
  isDraining: () => boolean;
  diagnostics: DataPathEvents;
  door: RequestDoor;
  sessions: SessionManager;
  streams: SessionStreams;
  room: StreamRoom;
}

export class SessionRoutes {
  readonly #parts: SessionRouteParts;

  constructor(parts: SessionRouteParts) {
    this.#parts = parts;
  }

  /** initialize: the virtual server answers, then the session opens (its id in the reply's header). */
  async initialize(
    request: FastifyRequest,
    reply: FastifyReply,
    message: JsonRpcRequest,
    principal: string | undefined,
  ): Promise<void> {
    const params = message.params ?? {};
    const problem = paramsProblem('initialize', params);
    if (problem) throw new Rejection('INVALID_PARAMS', `Invalid params: ${problem}`, message.id);
    const { protocolVersion, result } = this.#parts.handler.initialize(
      params,
      httpOrigin(request),
      principal,
      message.id,
    );
    const session = await this.#parts.sessions.create(params, protocolVersion, principal, message.id, request.log);
    reply
      .code(200)
      .header('content-type', 'application/json')
      .header(SESSION_HEADER, session.id)
      .send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  }

  /** A 2025 request's context, read from its session; `sessionSink` is built once per request and shared. */
  context(
    session: SessionRecord,
    mayCall: ((tool: string) => boolean) | undefined,
    sink: MessageSink,
    sessionSink: MessageSink,
    http: HttpOrigin,
    caller?: Caller,
    /** The POST's TCP peer: who an anonymous session's requests are to rate limits. */
    remoteAddress?: string,
  ): RequestContext {
    return {
      protocolVersion: session.protocolVersion,
      clientCapabilities: session.clientCapabilities,
      clientInfo: session.clientInfo,
      principal: session.principal,
      // This request's token (the session's principal sent it): a session keeps no token.
      caller,
      mayCall,
      logLevel: session.logLevel,
      setLogLevel: (level) => this.#parts.sessions.setLogLevel(session, level, this.#parts.log()),
      foundTools: session.foundTools,
      setFoundTools: (names) => this.#parts.sessions.setFoundTools(session, names, this.#parts.log()),
      stateless: false,
      scope: session.id,
      endpoint: session.server,
      sink,
      sessionSink,
      client: session.id,
      slots: this.#parts.inFlight,
      http,
      remoteAddress,
    };
  }
  /** The notifications and responses of a session's POST, handed to the virtual server (nothing answers them). */
  notify(
    log: FastifyBaseLogger,
    session: SessionRecord,
    messages: Classified[],
    batch: boolean,
    ctx: RequestContext,
  ): void {
    for (const c of messages) {
      if (c.kind !== 'notification') continue;
      const problem = paramsProblem(c.message.method, c.message.params);
      if (problem) {
        // Nothing answers a notification: alone in the body it is refused, in a batch skipped.
        if (!batch) throw new Rejection('INVALID_REQUEST', `Invalid notification: ${problem}`);
        this.#parts.diagnostics.emit('transport:rejection', { errorType: 'INVALID_PARAMS' });
        continue;
      }
      if (c.message.method === 'notifications/initialized') this.#parts.sessions.markInitialized(session, log);
      this.#parts.handler.handleNotification(ctx, c.message);
    }
    for (const c of messages) if (c.kind === 'response') this.#parts.handler.handleResponse(ctx, c.message);
  }
  /** GET: the session's stream of messages unrelated to any request, or (with Last-Event-ID) a stream resumed. */
  async get(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (this.#parts.isDraining()) throw new Rejection('SHUTTING_DOWN');
    const versionHeader = header(request, VERSION_HEADER);
    if (namesStatelessEra(versionHeader))
      throw new Rejection(
        'METHOD_NOT_ALLOWED',
        'Method Not Allowed: the stateless revision has no GET stream (use subscriptions/listen)',
      );
    if (!acceptsSse(header(request, 'accept')))
      throw new Rejection('NOT_ACCEPTABLE', 'Not Acceptable: Accept must list text/event-stream');
    checkVersionHeader(versionHeader);
    this.#parts.room.check();
    const session = await this.#classifiedSession(request, 'stream');
    const prime = primesStreams(session.protocolVersion);
    const lastEventId = header(request, 'last-event-id');
    if (lastEventId !== undefined) return this.#resume(request, reply, session, lastEventId, prime);
    if (this.#parts.streams.has(session.id)) throw new Rejection('STREAM_CONFLICT');
    await this.#parts.streams.open(session.id, this.#parts.room.open(reply, 'get'), prime);
  }

  /**
   * GET with Last-Event-ID: the named stream's later events, then live ones — until its final
   * response for a POST reply; as the session's GET stream (taking it over) for `get`. An id we
   * cannot resume from (not ours, another session's, trimmed or expired) is a 400, answered
   * before any stream opens.
   */
  async #resume(
    request: FastifyRequest,
    reply: FastifyReply,
    session: SessionRecord,
    lastEventId: string,
    prime: boolean,
  ): Promise<void> {
    const unknown = () =>
      new Rejection(
        'EVENT_ID_UNKNOWN',
        `Last-Event-ID ${JSON.stringify(lastEventId)} names no event this session can resume from (unknown, or ` +
          `no longer retained)`,
      );
    const parsed = parseEventId(lastEventId);
    if (!parsed) {
      this.#parts.diagnostics.emit('stream:resumption', { outcome: 'unknown' });
      throw unknown();
    }
    let resumption;
    try {
      resumption = await this.#parts.streams.resume(session.id, parsed.streamId, parsed.position);
    } catch (err) {
      request.log.error({ err }, 'event store failure');
      throw new Rejection('SESSION_STORE_UNAVAILABLE', 'The event store cannot be reached: resume again later');
    }
    if (!resumption) throw unknown();
    resumption.start(this.#parts.room.open(reply, parsed.streamId === GET_STREAM ? 'get' : 'resumed'), prime);
  }

  /** DELETE: the session ends (its workers, streams and tasks with it). */
  async delete(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const versionHeader = header(request, VERSION_HEADER);
    if (namesStatelessEra(versionHeader))
      throw new Rejection('METHOD_NOT_ALLOWED', 'Method Not Allowed: the stateless revision has no sessions to delete');
    checkVersionHeader(versionHeader);
    const session = await this.#classifiedSession(request, 'delete');
    await this.#parts.sessions.delete(session, request.log);
    reply.code(200).send();
  }

  /** A GET stream's or DELETE's session, once the request is classified (metrics, audit) under its principal. */
  async #classifiedSession(request: FastifyRequest, type: 'stream' | 'delete'): Promise<SessionRecord> {
    const principal = this.#parts.door.identityOf(request)?.principal;
    this.#parts.diagnostics.emit('http:classified', { request: request.raw, type, method: undefined, principal });
    return this.#parts.sessions.load(header(request, SESSION_HEADER), principal, request.log);
  }
}
