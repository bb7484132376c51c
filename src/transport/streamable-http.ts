import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClientInfo, MessageSink, RequestContext } from '../contracts/request-context.js';
import type { McpHandler } from '../gateway/virtual-server.js';
import { AuthChallenge, ERRORS, GatewayError, errorObject, errorResponse } from '../jsonrpc/errors.js';
import { paramsProblem } from '../jsonrpc/params-schemas.js';
import { isObject, type Classified, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { SUPPORTED_VERSIONS, allowsBatch, isModernEra, isSupportedVersion } from '../jsonrpc/versions.js';
import type { Metrics } from '../observability/metrics.js';
import type { SessionRecord, SessionStore } from '../session/session-store.js';
import { GET_STREAM, parseEventId } from '../streams/event-id.js';
import { InFlightLimit } from './in-flight-limit.js';
import { readMessages, type IntakeLimits } from './message-intake.js';
import { honouredListChanges, type ListenStreams } from '../modern/listen-streams.js';
import { checkMirroredParams, readModernMeta, versionClaim, type ModernMeta } from '../modern/request-meta.js';
import { PostReply } from './post-reply.js';
import type { SessionStreams } from '../streams/session-streams.js';
import { SseWriter } from '../streams/sse-writer.js';
import { Rejection, replyWithError, replyWithFailure } from './error-reply.js';
import { SESSION_HEADER, VERSION_HEADER, acceptsPost, acceptsSse, header, hookHeaders, isJsonContentType, primesStreams } from './http-headers.js';
import type { Authenticator, Identity } from '../contracts/authenticator.js';

export interface StreamableHttpOptions {
  path: string;
  bodyLimit: number;
  /** Depth and batch bounds a body must keep to. */
  intake: IntakeLimits;
  /** Requests one client may have in flight on this replica (0: no limit). */
  maxInFlightPerClient: number;
  /** Long-lived SSE streams (GET, resumed, listen) open at once on this replica. */
  maxStreams: number;
  handler: McpHandler;
  store: SessionStore;
  streams: SessionStreams;
  /** subscriptions/listen streams of stateless clients. */
  listens: ListenStreams;
  isAllowedOrigin: (origin: string | undefined) => boolean;
  metrics: Metrics;
  /** true once shutdown began: new work is refused with a retryable 503. */
  isDraining: () => boolean;
  /** false until the upstreams have started: requests are refused with a retryable 503 until then. */
  isReady: () => boolean;
  /** With auth on: who sends a request, and what they may call. */
  auth?: Authenticator;
}

export interface StreamableHttpTransport {
  /** POST replies still being written (for the shutdown drain). */
  readonly activeReplies: number;
}

const NO_SINK: MessageSink = { send: () => false };

/** What a stateless (2026-07-28) request may ask; the rest is 404 -32601, as that revision says. */
const STATELESS_METHODS = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'completion/complete',
  'subscriptions/listen',
]);

/** Errors about a stateless request are in-band (200), but for the one the spec gives 400. */
function statelessStatus(response: JsonRpcResponse): number {
  return 'error' in response && response.error.code === ERRORS.MISSING_CLIENT_CAPABILITY.code ? ERRORS.MISSING_CLIENT_CAPABILITY.httpStatus : 200;
}

/**
 * The client-facing side of the MCP Streamable HTTP transport (2025-03-26 … 2025-11-25) on one
 * endpoint. It turns HTTP into RequestContexts and JSON-RPC messages for an McpHandler; what
 * the handler does with them is not its business.
 */
export function registerStreamableHttp(app: FastifyInstance, options: StreamableHttpOptions): StreamableHttpTransport {
  const { handler, store, streams, listens, metrics } = options;
  const state = { activeReplies: 0, streams: 0 };
  const identities = new WeakMap<FastifyRequest, Identity>();
  const principalOf = (request: FastifyRequest) => identities.get(request)?.principal;
  /** With per-tool scopes: what this request's token may call (the session's lists follow the token, not the session). */
  const mayCallOf = (request: FastifyRequest) => {
    const identity = identities.get(request);
    return identity && options.auth ? options.auth.toolPolicy(identity) : undefined;
  };

  /** With auth on, a tools/call needs the scopes `auth.toolScopes` names for its tool. */
  function authorizeCalls(request: FastifyRequest, messages: Classified[]): void {
    const identity = identities.get(request);
    if (!identity || !options.auth) return;
    for (const c of messages) {
      if (c.kind === 'request' && c.message.method === 'tools/call' && typeof c.message.params?.name === 'string') options.auth.authorizeTool(identity, c.message.params.name);
    }
  }
  /** Stateless requests get a scope of their own: unique on this replica, never stored. */
  const statelessScopes = { prefix: `~${randomUUID().slice(0, 8)}.`, next: 0 };
  const inFlight = new InFlightLimit(options.maxInFlightPerClient);

  function send(reply: FastifyReply, err: GatewayError): void {
    replyWithError(reply, metrics, err);
  }

  function fail(reply: FastifyReply, err: unknown): void {
    replyWithFailure(reply, metrics, err);
  }

  async function loadSession(request: FastifyRequest): Promise<SessionRecord> {
    const sid = header(request, SESSION_HEADER);
    if (!sid) throw new Rejection('SESSION_ID_REQUIRED');
    let session: SessionRecord | undefined;
    try {
      session = await store.get(sid);
    } catch (err) {
      request.log.error({ err }, 'session store failure');
      throw new Rejection('SESSION_STORE_UNAVAILABLE');
    }
    // Another principal's session is not theirs to learn exists.
    if (!session || session.principal !== principalOf(request)) throw new Rejection('SESSION_NOT_FOUND', `Session not found: it expired or was deleted; initialize a new one`);
    return session;
  }

  /** The MCP-Protocol-Version header names a stateless revision (whatever the body says). */
  function statelessHeader(request: FastifyRequest): boolean {
    const v = header(request, VERSION_HEADER);
    return v !== undefined && isModernEra(v);
  }

  function checkVersionHeader(request: FastifyRequest): void {
    const v = header(request, VERSION_HEADER);
    if (v !== undefined && !isSupportedVersion(v)) {
      throw new Rejection('UNSUPPORTED_PROTOCOL_VERSION', `Unsupported MCP-Protocol-Version: ${v}`, null, { supported: [...SUPPORTED_VERSIONS] });
    }
  }

  function contextOf(request: FastifyRequest, session: SessionRecord, sink: MessageSink): RequestContext {
    return {
      protocolVersion: session.protocolVersion,
      clientCapabilities: session.clientCapabilities,
      clientInfo: session.clientInfo,
      principal: session.principal,
      mayCall: mayCallOf(request),
      stateless: false,
      scope: session.id,
      sink,
      sessionSink: streams.sinkFor(session.id),
    };
  }

  /**
   * A 2026-07-28 request: everything it needs is in its own `_meta` and headers; no session is
   * read or made. Its reply is a JSON body or an SSE stream that is not recorded (nothing
   * resumes in that revision), and the client closing that stream cancels the request.
   */
  function serveStateless(request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest): void {
    let meta: ModernMeta;
    try {
      if (!STATELESS_METHODS.has(message.method)) throw new GatewayError('MODERN_METHOD_NOT_FOUND', `Method not found: ${message.method}`);
      const lookup = (name: string) => header(request, name);
      meta = readModernMeta(message, lookup);
      const problem = paramsProblem(message.method, message.params);
      if (problem) throw new GatewayError('INVALID_PARAMS', `Invalid params: ${problem}`);
      if (message.method === 'tools/call' && typeof message.params?.name === 'string') {
        checkMirroredParams(message.params.arguments, handler.mirroredParams(message.params.name), lookup);
      }
      authorizeCalls(request, [{ kind: 'request', message }]);
    } catch (err) {
      if (err instanceof AuthChallenge) throw err;
      if (err instanceof GatewayError) throw new Rejection(err.type, err.message, message.id, err.detail);
      throw err;
    }
    const scope = statelessScopes.prefix + statelessScopes.next++;
    const principal = principalOf(request);
    if (message.method === 'subscriptions/listen') {
      checkStreamRoom(message.id);
      return listen(reply, message, { ...meta, principal, mayCall: mayCallOf(request), stateless: true, scope, sink: NO_SINK, sessionSink: undefined });
    }
    reply.hijack();
    const raw = reply.raw;
    const post = new PostReply(raw, 1, false, hookHeaders(reply), (sse) => ({ send: (m) => sse.send(m), end: () => sse.end() }));
    // Without authorization a stateless client cannot be told apart: only the pool's bounds apply.
    if (!inFlight.acquire(principal)) return post.respond(tooMany(message.id, 'this principal'), 429);
    const ctx: RequestContext = { ...meta, principal, mayCall: mayCallOf(request), stateless: true, scope, sink: post, sessionSink: undefined };
    state.activeReplies++;
    raw.once('close', () => {
      state.activeReplies--;
      // Closing the reply stream is how a stateless client cancels.
      if (!post.finished) handler.releaseScope(scope);
    });
    answer(message, ctx, post, principal, statelessStatus);
  }

  /** Runs one request and writes its response; its in-flight place is given back first, whatever happened. */
  function answer(message: JsonRpcRequest, ctx: RequestContext, post: PostReply, client: string | undefined, status?: (r: JsonRpcResponse) => number): void {
    handler.handleRequest(ctx, message).then(
      (r) => {
        inFlight.release(client);
        post.respond(r, status?.(r));
      },
      (err: unknown) => {
        inFlight.release(client);
        app.log.error({ err, method: message.method }, 'request handler failed');
        post.respond(errorResponse(message.id, errorObject('INTERNAL_ERROR')) as JsonRpcResponse);
      },
    );
  }

  function tooMany(id: JsonRpcId, client: string): JsonRpcResponse {
    metrics.transportRejections.inc({ error_type: 'CLIENT_TOO_MANY_IN_FLIGHT' });
    return errorResponse(id, new GatewayError('CLIENT_TOO_MANY_IN_FLIGHT', `Too many requests in flight for ${client} (limit ${inFlight.limit}): wait for answers before sending more`).toJsonRpc());
  }

  /**
   * subscriptions/listen: list changes the virtual server has, and updates of the resources its
   * upstreams can watch; the acknowledgement names exactly those. `ctx` is the listener's.
   */
  function listen(reply: FastifyReply, message: JsonRpcRequest, ctx: RequestContext): void {
    const scope = ctx.scope;
    const requested = isObject(message.params?.notifications) ? message.params.notifications : {};
    const honoured = honouredListChanges(requested, handler.capabilities(true));
    // The virtual server learns the stream's sink below; the URIs it can watch are known first, for the acknowledgement.
    let deliver: MessageSink = NO_SINK;
    const uris = handler.watchResources(ctx, requested.resourceSubscriptions, { send: (m) => deliver.send(m) });
    if (uris.length > 0) honoured.resourceSubscriptions = uris;
    const sse = openSse(reply, 'listen');
    deliver = listens.open(sse, message.id, honoured);
    sse.onClose(() => handler.releaseScope(scope));
  }

  async function initialize(request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest): Promise<void> {
    const params = message.params ?? {};
    const problem = paramsProblem('initialize', params);
    if (problem) throw new Rejection('INVALID_PARAMS', `Invalid params: ${problem}`, message.id);
    const { protocolVersion, result } = handler.initialize(params);
    const clientInfo = isObject(params.clientInfo) ? (params.clientInfo as ClientInfo) : undefined;
    const session: SessionRecord = {
      id: randomUUID(),
      protocolVersion,
      clientCapabilities: isObject(params.capabilities) ? params.capabilities : {},
      clientInfo,
      initialized: false,
      createdAt: Date.now(),
    };
    const principal = principalOf(request);
    if (principal !== undefined) session.principal = principal;
    try {
      await store.create(session);
    } catch (err) {
      if (err instanceof GatewayError) throw new Rejection(err.type, err.message, message.id, err.detail);
      request.log.error({ err }, 'session store failure');
      throw new Rejection('SESSION_STORE_UNAVAILABLE', undefined, message.id);
    }
    request.log.info({ session: session.id, client: clientInfo?.name, version: protocolVersion }, 'session opened');
    reply
      .code(200)
      .header('content-type', 'application/json')
      .header(SESSION_HEADER, session.id)
      .send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  }

  function dispatch(request: FastifyRequest, reply: FastifyReply, session: SessionRecord, messages: Classified[], batch: boolean): void {
    let requests = 0;
    for (const c of messages) if (c.kind === 'request' || c.kind === 'invalid') requests++;
    const notificationCtx = contextOf(request, session, NO_SINK);
    for (const c of messages) {
      if (c.kind !== 'notification') continue;
      const problem = paramsProblem(c.message.method, c.message.params);
      if (problem) {
        // Nothing answers a notification: alone in the body it is refused, in a batch skipped.
        if (!batch) throw new Rejection('INVALID_REQUEST', `Invalid notification: ${problem}`);
        metrics.transportRejections.inc({ error_type: 'INVALID_PARAMS' });
        continue;
      }
      if (c.message.method === 'notifications/initialized' && !session.initialized) {
        store.update(session.id, { initialized: true }).catch((err: unknown) => request.log.warn({ err }, 'session update failed'));
      }
      handler.handleNotification(notificationCtx, c.message);
    }
    for (const c of messages) if (c.kind === 'response') handler.handleResponse(notificationCtx, c.message);
    if (requests === 0) {
      reply.code(202).send();
      return;
    }

    reply.hijack();
    const raw = reply.raw;
    const prime = primesStreams(session.protocolVersion);
    const post = new PostReply(raw, requests, batch, hookHeaders(reply), (sse) => streams.record(session.id, sse, prime));
    state.activeReplies++;
    raw.once('close', () => state.activeReplies--);
    const ctx = contextOf(request, session, post);
    for (const c of messages) {
      if (c.kind === 'invalid') post.respond(errorResponse(c.id, new GatewayError('INVALID_REQUEST', `Invalid Request: ${c.reason}`).toJsonRpc()));
      if (c.kind !== 'request') continue;
      const problem = paramsProblem(c.message.method, c.message.params);
      if (problem) {
        post.respond(errorResponse(c.message.id, errorObject('INVALID_PARAMS', `Invalid params: ${problem}`)));
        continue;
      }
      if (!inFlight.acquire(session.id)) {
        post.respond(tooMany(c.message.id, 'this session'), 429);
        continue;
      }
      answer(c.message, ctx, post, session.id);
    }
  }

  async function onPost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (options.isDraining()) throw new Rejection('SHUTTING_DOWN');
    if (!acceptsPost(header(request, 'accept'))) {
      throw new Rejection('NOT_ACCEPTABLE', 'Not Acceptable: Accept must list application/json and text/event-stream');
    }
    if (!isJsonContentType(header(request, 'content-type'))) throw new Rejection('UNSUPPORTED_MEDIA_TYPE');

    const { batch, messages } = readMessages(request.body as string, options.intake);
    const first = messages[0]!;
    if (!batch && first.kind === 'invalid') throw new Rejection('INVALID_REQUEST', `Invalid Request: ${first.reason}`, first.id);
    // The era is the body's: a request that names its version in _meta is stateless.
    if (!batch && first.kind === 'request' && versionClaim(first.message) !== undefined) return serveStateless(request, reply, first.message);
    if (statelessHeader(request)) {
      if (batch) throw new Rejection('INVALID_REQUEST', 'Invalid Request: batches do not exist in this protocol version');
      // No client notification over HTTP is defined for the stateless revision: accepted, nothing to do.
      if (first.kind === 'notification') return void reply.code(202).send();
      throw new Rejection('MODERN_META_INVALID', `MCP-Protocol-Version ${header(request, VERSION_HEADER)} requires params._meta with the protocol version and client capabilities`, first.kind === 'request' ? first.message.id : null);
    }
    if (batch && messages.some((c) => c.kind === 'request' && versionClaim(c.message) !== undefined)) {
      throw new Rejection('INVALID_REQUEST', 'Invalid Request: stateless requests cannot be batched');
    }
    const init = messages.find((c) => c.kind === 'request' && c.message.method === 'initialize');
    if (init) {
      if (batch) throw new Rejection('INVALID_REQUEST', 'Invalid Request: initialize must not be sent in a batch');
      return initialize(request, reply, (init as { message: JsonRpcRequest }).message);
    }

    checkVersionHeader(request);
    const session = await loadSession(request);
    authorizeCalls(request, messages);
    if (batch && !allowsBatch(session.protocolVersion)) {
      throw new Rejection('BATCH_NOT_SUPPORTED', `Batch requests are not supported by protocol version ${session.protocolVersion}`);
    }
    dispatch(request, reply, session, messages, batch);
  }

  async function onGet(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (options.isDraining()) throw new Rejection('SHUTTING_DOWN');
    if (statelessHeader(request)) throw new Rejection('METHOD_NOT_ALLOWED', 'Method Not Allowed: the stateless revision has no GET stream (use subscriptions/listen)');
    if (!acceptsSse(header(request, 'accept'))) throw new Rejection('NOT_ACCEPTABLE', 'Not Acceptable: Accept must list text/event-stream');
    checkVersionHeader(request);
    checkStreamRoom();
    const session = await loadSession(request);
    const prime = primesStreams(session.protocolVersion);
    const lastEventId = header(request, 'last-event-id');
    if (lastEventId !== undefined) return resume(request, reply, session, lastEventId, prime);
    if (streams.has(session.id)) throw new Rejection('STREAM_CONFLICT');
    await streams.open(session.id, openSse(reply, 'get'), prime);
  }

  /**
   * GET with Last-Event-ID: the named stream's later events, then live ones — until its final
   * response for a POST reply; as the session's GET stream (taking it over) for `get`. An id we
   * cannot resume from (not ours, another session's, trimmed or expired) is a 400, answered
   * before any stream opens.
   */
  async function resume(request: FastifyRequest, reply: FastifyReply, session: SessionRecord, lastEventId: string, prime: boolean): Promise<void> {
    const unknown = () => new Rejection('EVENT_ID_UNKNOWN', `Last-Event-ID ${JSON.stringify(lastEventId)} names no event this session can resume from (unknown, or no longer retained)`);
    const parsed = parseEventId(lastEventId);
    if (!parsed) {
      metrics.streamResumptions.inc({ outcome: 'unknown' });
      throw unknown();
    }
    let resumption;
    try {
      resumption = await streams.resume(session.id, parsed.streamId, parsed.position);
    } catch (err) {
      request.log.error({ err }, 'event store failure');
      throw new Rejection('SESSION_STORE_UNAVAILABLE', 'The event store cannot be reached: resume again later');
    }
    if (!resumption) throw unknown();
    resumption.start(openSse(reply, parsed.streamId === GET_STREAM ? 'get' : 'resumed'), prime);
  }

  /** Throws STREAM_LIMIT while this replica holds `maxStreams` long-lived streams; before any reply is written. */
  function checkStreamRoom(id: JsonRpcId | null = null): void {
    if (state.streams >= options.maxStreams) {
      throw new Rejection('STREAM_LIMIT', `This replica holds its maximum of ${options.maxStreams} open streams (limits.maxStreams): retry later`, id, { retryAfterMs: 5000 });
    }
  }

  function openSse(reply: FastifyReply, kind: 'get' | 'resumed' | 'listen'): SseWriter {
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    sse.open(hookHeaders(reply));
    state.streams++;
    metrics.sseStreamsOpen.inc({ kind });
    sse.onClose(() => {
      state.streams--;
      metrics.sseStreamsOpen.dec({ kind });
    });
    return sse;
  }

  async function onDelete(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (statelessHeader(request)) throw new Rejection('METHOD_NOT_ALLOWED', 'Method Not Allowed: the stateless revision has no sessions to delete');
    checkVersionHeader(request);
    const session = await loadSession(request);
    let deleted: boolean;
    try {
      deleted = await store.delete(session.id);
    } catch (err) {
      request.log.error({ err }, 'session store failure');
      throw new Rejection('SESSION_STORE_UNAVAILABLE');
    }
    if (!deleted) throw new Rejection('SESSION_NOT_FOUND');
    handler.releaseScope(session.id);
    streams.endSession(session.id);
    request.log.info({ session: session.id }, 'session deleted');
    reply.code(200).send();
  }

  const guard =
    (fn: (request: FastifyRequest, reply: FastifyReply) => Promise<void>) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      try {
        await fn(request, reply);
      } catch (err) {
        fail(reply, err);
      }
    };

  void app.register(async (scope) => {
    // The body stays a string: the transport parses it itself, once, and answers 415/400 in
    // JSON-RPC terms instead of Fastify's own error shapes.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: options.bodyLimit }, (_req, body, done) => done(null, body));
    scope.addHook('onRequest', async (request, reply) => {
      if (!options.isAllowedOrigin(header(request, 'origin'))) {
        send(reply, new GatewayError('ORIGIN_FORBIDDEN', `Origin not allowed: ${header(request, 'origin')}`));
        return reply;
      }
      if (!options.isReady()) {
        reply.header('retry-after', '1');
        send(reply, new GatewayError('NOT_READY', undefined, { retryAfterMs: 1000 }));
        return reply;
      }
      if (options.auth) {
        try {
          identities.set(request, await options.auth.authenticate(header(request, 'authorization')));
        } catch (err) {
          fail(reply, err);
          return reply;
        }
      }
      return undefined;
    });
    scope.setErrorHandler((err: { statusCode?: number; code?: string }, _request, reply) => {
      if (err.statusCode === 413) send(reply, new GatewayError('PAYLOAD_TOO_LARGE', `Payload Too Large: the limit is ${options.bodyLimit} bytes`));
      else if (err.statusCode === 415) send(reply, new GatewayError('UNSUPPORTED_MEDIA_TYPE'));
      else if (err.statusCode !== undefined && err.statusCode < 500) send(reply, new GatewayError('PARSE_ERROR', 'Parse error: body could not be read'));
      else fail(reply, err);
    });
    scope.post(options.path, guard(onPost));
    // Not HEAD: a GET here opens a stream. Other methods are refused in endpoint-methods.ts.
    scope.get(options.path, { exposeHeadRoute: false }, guard(onGet));
    scope.delete(options.path, guard(onDelete));
  });

  store.onExpired((id) => {
    handler.releaseScope(id);
    streams.endSession(id);
  });

  return {
    get activeReplies() {
      return state.activeReplies;
    },
  };
}
