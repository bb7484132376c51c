import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { replyWithError } from '../transport/error-reply.js';

export interface EndpointMethodOptions {
  /** The MCP endpoint. */
  path: string;
  isAllowedOrigin: (origin: string | undefined) => boolean;
  diagnostics: DataPathEvents;
}

/** What the endpoint serves; its routes exist for these only. */
const SERVED = new Set(['GET', 'POST', 'DELETE']);

function pathOf(request: FastifyRequest): string {
  const q = request.url.indexOf('?');
  return q === -1 ? request.url : request.url.slice(0, q);
}

/**
 * Refuses, in JSON-RPC, the HTTP methods the MCP endpoint does not serve, before anything else
 * answers them in its own terms: Fastify (404 for a method it has no route for, or a 400 for
 * QUERY without a Content-Type) and @fastify/cors (400 text/plain for an OPTIONS that is not a
 * preflight, 404 for a preflight from an origin it refuses). Added ahead of @fastify/cors, which
 * still answers good preflights (204).
 *
 * OPTIONS without Origin or Access-Control-Request-Method (not a preflight) and every method
 * but GET, POST and DELETE (HEAD, PUT, TRACE, PROPFIND, …): 405 with Allow. A preflight from an
 * origin not allowed: 403.
 */
export function registerEndpointMethods(app: FastifyInstance, options: EndpointMethodOptions): void {
  // Callback form: the served methods pass without a promise made per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (SERVED.has(request.method) || pathOf(request) !== options.path) return done();
    const refusal = refusalOf(request, options);
    if (refusal) replyWithError(reply, options.diagnostics, refusal);
    else done();
  });
}

/** Why the MCP endpoint refuses this method, or undefined for a good CORS preflight (@fastify/cors answers it). */
function refusalOf(request: FastifyRequest, options: EndpointMethodOptions): GatewayError | undefined {
  if (request.method !== 'OPTIONS') return new GatewayError('METHOD_NOT_ALLOWED');
  const origin = request.headers.origin;
  if (origin === undefined || request.headers['access-control-request-method'] === undefined) {
    return new GatewayError('METHOD_NOT_ALLOWED', 'Method Not Allowed: OPTIONS is answered only as a CORS preflight (Origin and Access-Control-Request-Method)');
  }
  if (!options.isAllowedOrigin(origin)) return new GatewayError('ORIGIN_FORBIDDEN', `Origin not allowed: ${origin}`);
  return undefined;
}
