import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../contracts/authenticator.js';
import type { Bus } from '../cluster/bus.js';
import { decodeLegacySsePost, encodeLegacySsePost, legacySseChannel } from '../cluster/bus-messages.js';
import type { LegacySseSettings } from '../config/schema.js';
import type { McpHandler } from '../contracts/mcp-handler.js';
import { CONNECTION_ONLY_VERSION } from '../jsonrpc/versions.js';
import type { DataPathEvents } from '../observability/events.js';
import { ClientConnection } from './client-connection.js';
import type { Connections } from './connections.js';
import { Rejection, replyWithFailure } from './error-reply.js';
import { header, isJsonContentType } from './http-headers.js';
import { InFlightLimit } from './in-flight-limit.js';
import { readMessages, type IntakeLimits } from './message-intake.js';
import type { RequestDoor } from './request-door.js';
import { stringBodies } from './request-door.js';
import { StreamRoom } from './stream-room.js';

export interface LegacySseOptions {
  settings: LegacySseSettings;
  bodyLimit: number;
  intake: IntakeLimits;
  maxInFlightPerClient: number;
  /** Open legacy streams on this replica (limits.maxStreams, counted apart from Streamable HTTP's). */
  maxStreams: number;
  /** limits.maxStreamBufferedBytes: a stream whose reader leaves more unsent is cut off (its session ends). */
  maxStreamBufferedBytes: number;
  keepAliveMs: number;
  door: RequestDoor;
  auth?: Authenticator | undefined;
  /** Carries a POST accepted here to the replica holding the session's stream. */
  bus: Bus;
  connections: Connections;
  diagnostics: DataPathEvents;
  isDraining: () => boolean;
}

/**
 * The HTTP+SSE transport of MCP 2024-11-05: `GET <base><ssePath>` opens a session and its stream
 * (first event `endpoint`: where to POST), `POST <base><messagesPath>?sessionId=…` carries the
 * client's messages and is answered 202; every reply travels on the stream.
 *
 * The session is an ordinary one of the store (limits, principal binding), so any replica takes
 * the POSTs: one that does not hold the stream checks the POST as Streamable HTTP would, then
 * hands the body over the bus to the replica that does, which runs it. The session ends
 * `graceMs` after its stream closes.
 */
export class LegacySseTransport {
  readonly #options: LegacySseOptions;
  readonly #inFlight: InFlightLimit;
  readonly #room: StreamRoom;

  constructor(options: LegacySseOptions) {
    this.#options = options;
    this.#inFlight = new InFlightLimit(options.maxInFlightPerClient);
    this.#room = new StreamRoom(options.maxStreams, options.diagnostics, options.maxStreamBufferedBytes);
  }

  /** The two routes under `basePath` ('' for the root) for the virtual server `handler`; call again per base path. */
  register(app: FastifyInstance, basePath: string, handler: McpHandler): this {
    const { settings, door } = this.#options;
    const messagesPath = basePath + settings.messagesPath;
    void app.register(async (plugin) => {
      stringBodies(plugin, this.#options.bodyLimit, this.#options.diagnostics, door);
      plugin.addHook('onRequest', (request, reply, done) => door.admit(request, reply, done));
      plugin.get(basePath + settings.ssePath, { exposeHeadRoute: false }, (request, reply) =>
        this.#guard(this.#open(request, reply, handler, messagesPath), reply),
      );
      plugin.post(messagesPath, (request, reply) => this.#guard(this.#post(request, reply), reply));
    });
    return this;
  }

  async #guard(work: Promise<void>, reply: FastifyReply): Promise<void> {
    try {
      await work;
    } catch (err) {
      if (!reply.sent && !reply.raw.headersSent) replyWithFailure(reply, this.#options.diagnostics, err);
      else reply.log.error({ err }, 'legacy SSE stream failed');
    }
  }

  /** GET: a new session, subscribed for POSTs from other replicas before the client learns where to POST. */
  async #open(request: FastifyRequest, reply: FastifyReply, handler: McpHandler, messagesPath: string): Promise<void> {
    const o = this.#options;
    if (o.isDraining()) throw new Rejection('SHUTTING_DOWN');
    this.#room.check();
    const identity = o.door.identityOf(request);
    const session = await o.connections.sessions.create(
      {},
      CONNECTION_ONLY_VERSION,
      identity?.principal,
      null,
      request.log,
      'legacy-sse',
    );
    // The client went away while the store made its session: no stream will ever end it.
    if (reply.raw.destroyed) return o.connections.sessions.forget(session, request.log);
    let sse: ReturnType<StreamRoom['open']> | undefined;
    const connection = new ClientConnection(
      session,
      { send: (m) => sse?.send(m) ?? false },
      {
        handler,
        sessions: o.connections.sessions,
        inFlight: this.#inFlight,
        intake: o.intake,
        diagnostics: o.diagnostics,
        log: request.log,
        identity,
        auth: o.auth,
        batches: true,
        isDraining: o.isDraining,
        requests: o.connections,
      },
    );
    o.connections.hold({ connection, hangUp: () => sse?.end() });
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      unsubscribe = await o.bus.subscribe(legacySseChannel(session.id), (raw) => {
        const post = decodeLegacySsePost(raw);
        if (post) connection.receive(post.body);
      });
    } catch (err) {
      o.connections.end(connection);
      request.log.error({ err }, 'bus subscription failed');
      throw new Rejection('SESSION_STORE_UNAVAILABLE', 'The bus between replicas cannot be reached: retry later');
    }
    // Gone during the subscription, the writer is closed from the start and the session ends as below.
    sse = this.#room.open(reply, 'legacy-sse');
    const keepAlive = setInterval(() => sse?.comment('keep-alive'), o.keepAliveMs);
    sse.onClose(() => {
      clearInterval(keepAlive);
      void unsubscribe?.().catch(() => undefined);
      // POSTs already on their way still run (their replies have nowhere to go), then the session ends.
      setTimeout(() => o.connections.end(connection), o.settings.graceMs).unref();
    });
    sse.event('endpoint', `${messagesPath}?sessionId=${encodeURIComponent(session.id)}`);
  }

  /** POST: checked here whichever replica this is, run where the stream is. */
  async #post(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const o = this.#options;
    if (o.isDraining()) throw new Rejection('SHUTTING_DOWN');
    if (!isJsonContentType(header(request, 'content-type'))) throw new Rejection('UNSUPPORTED_MEDIA_TYPE');
    const query = request.query as Record<string, unknown>;
    const sessionId = typeof query.sessionId === 'string' ? query.sessionId : undefined;
    const identity = o.door.identityOf(request);
    // Unknown and another principal's session alike are 404: a session not yours is not yours to learn exists.
    const session = await o.connections.sessions.load(sessionId, identity?.principal, request.log, 'legacy-sse');
    const body = request.body as string;
    const intake = readMessages(body, o.intake);
    if (identity && o.auth) {
      for (const c of intake.messages) {
        if (c.kind === 'request' && c.message.method === 'tools/call' && typeof c.message.params?.name === 'string')
          o.auth.authorizeTool(identity, c.message.params.name);
      }
    }
    const held = o.connections.get(session.id);
    if (held) held.accept(intake);
    else {
      try {
        await o.bus.publish(legacySseChannel(session.id), encodeLegacySsePost({ type: 'post', body }));
      } catch (err) {
        request.log.error({ err }, 'bus publish failed');
        throw new Rejection('SESSION_STORE_UNAVAILABLE', 'The bus between replicas cannot be reached: retry later');
      }
    }
    reply.code(202).header('content-type', 'text/plain').send('Accepted');
  }
}
