import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Identity } from '../contracts/authenticator.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { replyWithError, replyWithFailure } from './error-reply.js';
import { header } from './http-headers.js';

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
}

/**
 * The door of every client transport's routes: Origin, readiness, and (with auth on) who sends
 * the request, answered in JSON-RPC terms when refused. `identityOf` is who passed it.
 */
export class RequestDoor {
  readonly #identities = new WeakMap<FastifyRequest, Identity>();

  constructor(private readonly options: DoorOptions) {}

  /** An onRequest hook: the reply when refused, undefined to go on. */
  async admit(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const { isAllowedOrigin, isReady, auth, diagnostics, server } = this.options;
    if (!isAllowedOrigin(header(request, 'origin'))) {
      replyWithError(reply, diagnostics, new GatewayError('ORIGIN_FORBIDDEN', `Origin not allowed: ${header(request, 'origin')}`));
      return reply;
    }
    if (!isReady()) {
      reply.header('retry-after', '1');
      replyWithError(reply, diagnostics, new GatewayError('NOT_READY', undefined, { retryAfterMs: 1000 }));
      return reply;
    }
    try {
      if (auth) this.#identities.set(request, await auth.authenticate(header(request, 'authorization')));
      // A virtual server's principals and scopes, once the sender is known.
      server?.admit(this.#identities.get(request));
    } catch (err) {
      replyWithFailure(reply, diagnostics, err);
      return reply;
    }
    return undefined;
  }

  identityOf(request: FastifyRequest): Identity | undefined {
    return this.#identities.get(request);
  }
}

/**
 * A route scope whose bodies stay strings (the transport parses them itself, once) up to
 * `bodyLimit`, with Fastify's own refusals answered as errors of the table instead of its shapes.
 */
export function stringBodies(scope: FastifyInstance, bodyLimit: number, diagnostics: DataPathEvents): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_req, body, done) => done(null, body));
  scope.setErrorHandler((err: { statusCode?: number; code?: string }, _request, reply) => {
    if (err.statusCode === 413) replyWithError(reply, diagnostics, new GatewayError('PAYLOAD_TOO_LARGE', `Payload Too Large: the limit is ${bodyLimit} bytes`));
    else if (err.statusCode === 415) replyWithError(reply, diagnostics, new GatewayError('UNSUPPORTED_MEDIA_TYPE'));
    else if (err.statusCode !== undefined && err.statusCode < 500) replyWithError(reply, diagnostics, new GatewayError('PARSE_ERROR', 'Parse error: body could not be read'));
    else replyWithFailure(reply, diagnostics, err);
  });
}
