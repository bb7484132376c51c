import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Identity } from '../contracts/authenticator.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { frameworkRefusal, replyWithError, replyWithFailure, type FrameworkError } from './error-reply.js';
import type { ClientByteRate } from './client-byte-rate.js';
import { header } from './http-headers.js';
import { LARGE_TEXT_CHARS, nextTurn } from '../timing/loop-turns.js';

/** What every client transport checks before a request (or a WebSocket upgrade) is served. */
export interface DoorOptions {
  isAllowedOrigin: (origin: string | undefined) => boolean;
  /** false until the upstreams have started: refused with a retryable 503 until then. */
  isReady: () => boolean;
  /** With auth on: who sends a request. */
  auth?: Authenticator | undefined;
  diagnostics: DataPathEvents;
  /**
   * A virtual server's admission (servers[]): refuses a client its principals or scopes leave out
   * (throws a GatewayError: 403, or 404 for a server a reload removed).
   */
  server?: { admit(identity: Identity | undefined): void } | undefined;
  /** limits.maxBodyBytesPerSecondPerClient, one for every transport of the gateway. */
  bodyRate?: ClientByteRate | undefined;
}

/**
 * The door of every client transport's routes: Origin, readiness, and (with auth on) who sends
 * the request, answered in JSON-RPC terms when refused. `identityOf` is who passed it.
 */
export class RequestDoor {
  readonly #identities = new WeakMap<FastifyRequest, Identity>();
  /** Requests whose declared body was charged at the door (the parser then charges nothing). */
  readonly #charged = new WeakSet<FastifyRequest>();

  constructor(private readonly options: DoorOptions) {}

  /**
   * An onRequest hook in callback form: `done` to go on, or a refusal replied (and `done` never
   * called). Without auth nothing here waits, so no promise is made per request.
   */
  admit(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const { isAllowedOrigin, isReady, auth, diagnostics } = this.options;
    if (!isAllowedOrigin(header(request, 'origin'))) {
      replyWithError(
        reply,
        diagnostics,
        new GatewayError('ORIGIN_FORBIDDEN', `Origin not allowed: ${header(request, 'origin')}`),
      );
      return;
    }
    if (!isReady()) {
      reply.header('retry-after', '1');
      replyWithError(reply, diagnostics, new GatewayError('NOT_READY', undefined, { retryAfterMs: 1000 }));
      return;
    }
    if (!auth) {
      if (this.#enter(request, reply, undefined)) done();
      return;
    }
    auth.authenticate(header(request, 'authorization')).then(
      (identity) => {
        if (this.#enter(request, reply, identity)) done();
      },
      (err: unknown) => replyWithFailure(reply, diagnostics, err),
    );
  }

  /** Whether `identity` may enter (a virtual server's principals and scopes); the refusal is replied. */
  #enter(request: FastifyRequest, reply: FastifyReply, identity: Identity | undefined): boolean {
    try {
      if (identity) this.#identities.set(request, identity);
      this.options.server?.admit(identity);
      this.#chargeDeclared(request, identity);
      return true;
    } catch (err) {
      replyWithFailure(reply, this.options.diagnostics, err);
      return false;
    }
  }

  /**
   * A body its Content-Length announces is charged before a byte of it is read: a client past its
   * share is refused before its body is read and decoded (measured: one client retrying 3.5 MB
   * calls at once after each 429 sent 13 a second, each read and decoded in full). Node discards
   * the unread body after the reply; closing the connection instead would reset it under a client
   * still sending, which then never reads its 429. A length past the largest body is left to the
   * body limit (413); chunked bodies are charged by the parser, once read.
   */
  #chargeDeclared(request: FastifyRequest, identity: Identity | undefined): void {
    const rate = this.options.bodyRate;
    if (rate === undefined || rate.rate === 0) return;
    const declared = Number(request.headers['content-length']);
    if (!(declared > 0) || declared > rate.largestBody) return;
    rate.take(identity?.principal ?? request.ip, declared);
    this.#charged.add(request);
  }

  identityOf(request: FastifyRequest): Identity | undefined {
    return this.#identities.get(request);
  }

  /**
   * Charges a body of `chars` to who sent it (its principal, else its address); throws
   * CLIENT_TOO_MANY_BYTES past its share. Before the body is parsed: a refused one costs no more.
   */
  chargeBody(request: FastifyRequest, chars: number): void {
    const rate = this.options.bodyRate;
    // Off by default: then no lookup of who sent it, on every body.
    if (rate === undefined || rate.rate === 0 || this.#charged.has(request)) return;
    rate.take(this.identityOf(request)?.principal ?? request.ip, chars);
  }

  /**
   * Charges a frame of `bytes` a stream of `request` already read to who sent it, past its share
   * too; returns in how many ms that client's debt is paid (0: none), for the stream to read no
   * more of it until then (paced-frames.ts).
   */
  debitFrame(request: FastifyRequest, bytes: number): number {
    const rate = this.options.bodyRate;
    if (rate === undefined || rate.rate === 0) return 0;
    return rate.debit(this.identityOf(request)?.principal ?? request.ip, bytes);
  }
}

/**
 * A route scope whose bodies stay strings (the transport parses them itself, once) up to
 * `bodyLimit`, with Fastify's own refusals answered as errors of the table instead of its shapes.
 */
export function stringBodies(
  scope: FastifyInstance,
  bodyLimit: number,
  diagnostics: DataPathEvents,
  door?: RequestDoor,
): void {
  scope.removeAllContentTypeParsers();
  const asString = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (err: Error | null, body?: string | Buffer) => void,
  ) => {
    try {
      door?.chargeBody(request, body.length);
    } catch (err) {
      done(err as Error);
      return;
    }
    // Reading a large body and parsing it are two holds of the event loop, not one (timing/loop-turns.ts).
    if (body.length > LARGE_TEXT_CHARS) nextTurn(() => done(null, body));
    else done(null, body);
  };
  // application/json by name too: Fastify caches the parser it finds for a content type, but not
  // its catch-all, which it looks for again (parsing the header anew) on every request.
  scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, asString);
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, asString);
  scope.setErrorHandler((err: FrameworkError, _request, reply) => {
    replyWithFailure(reply, diagnostics, frameworkRefusal(err, bodyLimit) ?? err);
  });
}
