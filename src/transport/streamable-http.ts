import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Identity } from '../contracts/authenticator.js';
import { NO_SINK, type Caller, type RequestContext } from '../contracts/request-context.js';
import type { McpHandler } from '../contracts/mcp-handler.js';
import { AuthChallenge, GatewayError, errorObject, errorResponse } from '../jsonrpc/errors.js';
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/messages.js';
import { paramsProblem } from '../jsonrpc/params-schemas.js';
import { allowsBatch } from '../jsonrpc/versions.js';
import type { ListenStreams } from '../stateless/listen-streams.js';
import type { StatelessMeta } from '../stateless/request-meta.js';
import { StatelessServing, statelessStatus } from '../stateless/stateless-serving.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionRecord, SessionStore } from '../session/session-store.js';
import type { SessionStreams } from '../streams/session-streams.js';
import { onceClosed, type SseWriter } from '../streams/sse-writer.js';
import { checkVersionHeader, routePost } from './era-routing.js';
import { Rejection, replyWithFailure } from './error-reply.js';
import {
  SESSION_HEADER,
  VERSION_HEADER,
  acceptsPost,
  header,
  hookHeaders,
  httpOrigin,
  isJsonContentType,
  primesStreams,
} from './http-headers.js';
import { InFlightLimit } from './in-flight-limit.js';
import { describeIntake, readMessages, type Intake, type IntakeLimits } from './message-intake.js';
import { PostReply, type ReplyStream } from './post-reply.js';
import { RequestDoor, stringBodies, type DoorOptions } from './request-door.js';
import { SessionManager } from './session-manager.js';
import { SessionRoutes } from './session-routes.js';
import { StreamRoom } from './stream-room.js';
import { LARGE_TEXT_CHARS, afterTurn } from '../timing/loop-turns.js';

export interface StreamableHttpOptions {
  path: string;
  bodyLimit: number;
  /** Depth and batch bounds a body must keep to. */
  intake: IntakeLimits;
  /** Requests one client may have in flight on this replica (0: no limit). */
  maxInFlightPerClient: number;
  /** Long-lived SSE streams (GET, resumed, listen) open at once on this replica. */
  maxStreams: number;
  /** What any SSE reply or stream may leave unsent before its reader is cut off. */
  maxStreamBufferedBytes: number;
  handler: McpHandler;
  store: SessionStore;
  streams: SessionStreams;
  /** subscriptions/listen streams of stateless clients. */
  listens: ListenStreams;
  isAllowedOrigin: (origin: string | undefined) => boolean;
  /** Where refusals and streams are published (metrics subscribe). */
  diagnostics: DataPathEvents;
  /** true once shutdown began: new work is refused with a retryable 503. */
  isDraining: () => boolean;
  /** false until the upstreams have started: requests are refused with a retryable 503 until then. */
  isReady: () => boolean;
  /** With auth on: who sends a request, and what they may call. */
  auth?: Authenticator;
  /**
   * A virtual server's endpoint (servers[]): its sessions are bound to it (`server`, its path), unknown elsewhere;
   * `admit` refuses a client its principals or scopes leave out (a GatewayError: 403, 404 if a reload removed it).
   */
  server?: { path: string; admit(identity: Identity | undefined): void };
  /** The replica's bounds when several endpoints share them (servers[]): else this endpoint's own. */
  bounds?: { inFlight: InFlightLimit; room: StreamRoom };
  bodyRate?: DoorOptions['bodyRate']; // limits.maxBodyBytesPerSecondPerClient, one for every transport
}

type MayCall = ((tool: string) => boolean) | undefined;

/** A stateless POST's SSE reply: written as it comes, not recorded (nothing resumes in that revision). */
function unrecorded(sse: SseWriter): ReplyStream {
  return { send: (m) => sse.send(m), end: () => sse.end() };
}

/**
 * The client-facing side of the MCP Streamable HTTP transport (2025-03-26 … 2026-07-28) on one
 * endpoint. It turns HTTP into RequestContexts and JSON-RPC messages for an McpHandler; what the
 * handler does with them is not its business. Sessions are the SessionManager's (what only they
 * have on the endpoint SessionRoutes'), the stateless era's checks and listen streams stateless/'s.
 */
export class StreamableHttpTransport {
  readonly #options: StreamableHttpOptions;
  readonly #handler: McpHandler;
  readonly #streams: SessionStreams;
  readonly #diagnostics: DataPathEvents;
  readonly #sessions: SessionManager;
  readonly #stateless: StatelessServing;
  readonly #inFlight: InFlightLimit;
  readonly #room: StreamRoom;
  readonly #door: RequestDoor;
  /** GET and DELETE, which only a 2025 session has. */
  readonly #routes: SessionRoutes;
  #log: FastifyBaseLogger | undefined;
  #activeReplies = 0;
  /** Made once, not per reply: counts a POST reply out when its connection closes. */
  readonly #replyClosed = (): void => {
    this.#activeReplies--;
  };

  constructor(options: StreamableHttpOptions) {
    this.#options = options;
    this.#handler = options.handler;
    this.#streams = options.streams;
    this.#diagnostics = options.diagnostics;
    this.#inFlight = options.bounds?.inFlight ?? new InFlightLimit(options.maxInFlightPerClient);
    this.#door = new RequestDoor(options);
    const { maxStreams, maxStreamBufferedBytes, diagnostics } = options;
    this.#room = options.bounds?.room ?? new StreamRoom(maxStreams, diagnostics, maxStreamBufferedBytes);
    this.#stateless = new StatelessServing(options.handler, options.listens, this.#inFlight, options.server?.path);
    this.#sessions = new SessionManager(
      options.store,
      (id) => {
        this.#handler.releaseScope(id);
        this.#streams.endSession(id);
      },
      options.diagnostics,
      options.server?.path,
    );
    this.#routes = new SessionRoutes({
      handler: options.handler,
      inFlight: this.#inFlight,
      log: () => this.#log,
      isDraining: () => options.isDraining(),
      diagnostics: options.diagnostics,
      door: this.#door,
      sessions: this.#sessions,
      streams: this.#streams,
      room: this.#room,
    });
  }

  /** A config reload's new bounds (limits.maxInFlightPerClient, limits.maxStreams), from the next request on. */
  setLimits(limits: {
    maxInFlightPerClient: number;
    maxStreams: number;
    maxBodyBytesPerSecondPerClient: number;
  }): void {
    this.#inFlight.limit = limits.maxInFlightPerClient;
    this.#room.max = limits.maxStreams;
  }

  /** POST replies still being written (for the shutdown drain). */
  get activeReplies(): number {
    return this.#activeReplies;
  }

  /** The endpoint's routes (POST, GET, DELETE on `path`) in a scope of their own on `app`. */
  register(app: FastifyInstance): this {
    this.#log = app.log;
    const options = this.#options;
    void app.register(async (plugin) => {
      stringBodies(plugin, options.bodyLimit, this.#diagnostics, this.#door);
      plugin.addHook('onRequest', (request, reply, done) => this.#door.admit(request, reply, done));
      plugin.post(options.path, (request, reply) => this.#guard(this.#onPost(request, reply), reply));
      // Not HEAD: a GET here opens a stream. Other methods are refused in server/endpoint-methods.ts.
      plugin.get(options.path, { exposeHeadRoute: false }, (request, reply) =>
        this.#guard(this.#routes.get(request, reply), reply),
      );
      plugin.delete(options.path, (request, reply) => this.#guard(this.#routes.delete(request, reply), reply));
    });
    return this;
  }

  /** A route's work, with whatever it throws answered as an error reply. */
  async #guard(work: Promise<void>, reply: FastifyReply): Promise<void> {
    try {
      await work;
    } catch (err) {
      replyWithFailure(reply, this.#diagnostics, err);
    }
  }

  async #onPost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (this.#options.isDraining()) throw new Rejection('SHUTTING_DOWN');
    if (!acceptsPost(header(request, 'accept')))
      throw new Rejection('NOT_ACCEPTABLE', 'Not Acceptable: Accept must list application/json and text/event-stream');
    if (!isJsonContentType(header(request, 'content-type'))) throw new Rejection('UNSUPPORTED_MEDIA_TYPE');
    const intake = readMessages(request.body as string, this.#options.intake);
    if ((request.body as string).length > LARGE_TEXT_CHARS) await afterTurn(); // parse, forward: two holds, not one
    const versionHeader = header(request, VERSION_HEADER);
    const identity = this.#door.identityOf(request);
    if (this.#diagnostics.has('http:classified'))
      this.#diagnostics.emit('http:classified', {
        request: request.raw,
        ...describeIntake(intake),
        principal: identity?.principal,
      });
    switch (routePost(intake, versionHeader)) {
      case 'stateless':
        return this.#serveStateless(
          request,
          reply,
          (intake.messages[0] as { message: JsonRpcRequest }).message,
          identity,
        );
      case 'accepted':
        return void reply.code(202).send();
      case 'initialize':
        return this.#routes.initialize(
          request,
          reply,
          (intake.messages[0] as { message: JsonRpcRequest }).message,
          identity?.principal,
        );
      case 'session':
        break;
    }
    checkVersionHeader(versionHeader);
    const session = await this.#sessions.load(header(request, SESSION_HEADER), identity?.principal, request.log);
    if (identity) for (const c of intake.messages) if (c.kind === 'request') this.#authorizeCall(identity, c.message);
    if (intake.batch && !allowsBatch(session.protocolVersion)) {
      throw new Rejection(
        'BATCH_NOT_SUPPORTED',
        `Batch requests are not supported by protocol version ${session.protocolVersion}`,
      );
    }
    this.#dispatch(request, reply, session, intake, this.#mayCall(identity), identity?.caller);
  }

  /**
   * With auth on, a tools/call needs the scopes `auth.toolScopes` names for its tool. Not a tool
   * this endpoint's server does not offer: that call fails as any unknown tool does, naming no scope.
   */
  #authorizeCall(identity: Identity, message: JsonRpcRequest): void {
    const name = message.method === 'tools/call' ? message.params?.name : undefined;
    if (typeof name === 'string' && this.#handler.exposedTool(name) !== undefined)
      this.#options.auth?.authorizeTool(identity, name);
  }

  /**
   * With per-tool scopes: what this request's token may call (the session's lists follow the token, not the session).
   */
  #mayCall(identity: Identity | undefined): MayCall {
    return identity && this.#options.auth ? this.#options.auth.toolPolicy(identity) : undefined;
  }

  /** The messages of a session's POST: notifications and responses first, then the requests, answered on one reply. */
  #dispatch(
    request: FastifyRequest,
    reply: FastifyReply,
    session: SessionRecord,
    { batch, messages }: Intake,
    mayCall: MayCall,
    caller?: Caller,
  ): void {
    let requests = 0;
    for (const c of messages) if (c.kind === 'request' || c.kind === 'invalid') requests++;
    const sessionSink = this.#streams.sinkFor(session.id);
    const http = httpOrigin(request);
    if (requests < messages.length)
      this.#routes.notify(
        request.log,
        session,
        messages,
        batch,
        this.#routes.context(session, mayCall, NO_SINK, sessionSink, http),
      );
    if (requests === 0) {
      reply.code(202).send();
      return;
    }

    reply.hijack();
    const raw = reply.raw;
    const prime = primesStreams(session.protocolVersion);
    // Cut off (its reader did not read), the calls it carries are cancelled; a dropped connection cancels none.
    const bound = this.#room.bound('reply', () => {
      for (const cancel of post.cancellations(messages)) this.#handler.handleNotification(ctx, cancel);
    });
    const record = (sse: SseWriter) => this.#streams.record(session.id, sse, prime);
    const post = new PostReply(raw, requests, batch, hookHeaders(reply), record, bound);
    this.#activeReplies++;
    // The client may have gone while the session loaded: its close already fired.
    onceClosed(raw, this.#replyClosed);
    const ctx = this.#routes.context(session, mayCall, post, sessionSink, http, caller, request.ip);
    for (const c of messages) {
      if (c.kind === 'invalid')
        post.respond(
          errorResponse(c.id, new GatewayError('INVALID_REQUEST', `Invalid Request: ${c.reason}`).toJsonRpc()),
        );
      if (c.kind !== 'request') continue;
      const problem = paramsProblem(c.message.method, c.message.params);
      if (problem) {
        post.respond(errorResponse(c.message.id, errorObject('INVALID_PARAMS', `Invalid params: ${problem}`)));
        continue;
      }
      if (!this.#inFlight.acquire(session.id, c.message.method)) {
        post.respond(this.#tooMany(c.message.id, 'this session'), 429);
        continue;
      }
      this.#answer(c.message, ctx, post, session.id);
    }
  }

  /**
   * A 2026-07-28 request (see stateless/stateless-serving.ts). Its reply is a JSON body or an SSE
   * stream that is not recorded, and the client closing that stream cancels the request.
   */
  #serveStateless(
    request: FastifyRequest,
    reply: FastifyReply,
    message: JsonRpcRequest,
    identity: Identity | undefined,
  ): void | Promise<void> {
    let meta: StatelessMeta;
    try {
      meta = this.#stateless.admit(message, (name) => header(request, name));
      if (identity) this.#authorizeCall(identity, message);
    } catch (err) {
      if (err instanceof AuthChallenge) throw err;
      if (err instanceof GatewayError) throw new Rejection(err.type, err.message, message.id, err.detail);
      throw err;
    }
    const scope = this.#stateless.newScope();
    const principal = identity?.principal;
    if (message.method === 'subscriptions/listen') {
      this.#room.check(message.id);
      const ctx = this.#stateless.context(
        meta,
        principal,
        this.#mayCall(identity),
        scope,
        NO_SINK,
        httpOrigin(request),
      );
      // Checked again as it opens: the task ids it names were read meanwhile, and other streams may have opened.
      const open = () => (this.#room.check(message.id), this.#room.open(reply, 'listen'));
      return this.#stateless
        .listen(message, ctx, open)
        .catch((err: unknown) => Promise.reject(Rejection.answering(err, message.id)));
    }
    reply.hijack();
    const raw = reply.raw; // cut off or closed, the stream's close releases its scope (below)
    const post = new PostReply(raw, 1, false, hookHeaders(reply), unrecorded, this.#room.bound('reply'));
    // Without authorization a stateless client cannot be told apart: only the pool's bounds apply.
    if (!this.#inFlight.acquire(principal, message.method))
      return post.respond(this.#tooMany(message.id, 'this principal'), 429);
    const http = httpOrigin(request);
    const ctx = this.#stateless.context(
      meta,
      principal,
      this.#mayCall(identity),
      scope,
      post,
      http,
      identity?.caller,
      request.ip,
    );
    this.#activeReplies++;
    onceClosed(raw, () => {
      this.#activeReplies--;
      // Closing the reply stream is how a stateless client cancels.
      if (!post.finished) this.#handler.releaseScope(scope);
    });
    this.#answer(message, ctx, post, principal, statelessStatus);
  }

  /** Runs one request and writes its response; its in-flight place is given back first, whatever happened. */
  #answer(
    message: JsonRpcRequest,
    ctx: RequestContext,
    post: PostReply,
    client: string | undefined,
    status?: (r: JsonRpcResponse) => number,
  ): void {
    this.#handler.handleRequest(ctx, message).then(
      (r) => {
        this.#inFlight.release(client);
        post.respond(r, status?.(r));
      },
      (err: unknown) => {
        this.#inFlight.release(client);
        this.#log?.error({ err, method: message.method, reqId: ctx.http?.requestId }, 'request handler failed');
        post.respond(errorResponse(message.id, errorObject('INTERNAL_ERROR')) as JsonRpcResponse);
      },
    );
  }

  #tooMany(id: JsonRpcId, client: string): JsonRpcResponse {
    this.#diagnostics.emit('transport:rejection', { errorType: 'CLIENT_TOO_MANY_IN_FLIGHT' });
    return errorResponse(
      id,
      new GatewayError(
        'CLIENT_TOO_MANY_IN_FLIGHT',
        `Too many requests in flight for ${client} (limit ${this.#inFlight.limit}): wait for answers before ` +
          `sending more`,
      ).toJsonRpc(),
    );
  }
}

/** The MCP endpoint on `app` (app.ts's one entry point): see StreamableHttpTransport. */
export function registerStreamableHttp(app: FastifyInstance, options: StreamableHttpOptions): StreamableHttpTransport {
  return new StreamableHttpTransport(options).register(app);
}
