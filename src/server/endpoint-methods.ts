import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { replyWithError } from '../transport/error-reply.js';

export interface EndpointMethodOptions {
  /** The MCP endpoints: the main path and every virtual server's (servers[]). */
  paths: readonly string[];
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
 * Refuses, in JSON-RPC, what no route of the app serves, before anything else answers it in its
 * own terms: Fastify (a 404 of its own shape for a method or path it has no route for, after
 * reading and parsing the body, which could itself fail first; a 400 for QUERY without a
 * Content-Type) and @fastify/cors (400 text/plain for an OPTIONS that is not a preflight, on any
 * path, 404 for a preflight from an origin it refuses). One hook for every endpoint, added ahead
 * of @fastify/cors, which still answers good preflights (204).
 *
 * On an MCP endpoint: OPTIONS without Origin or Access-Control-Request-Method (not a preflight)
 * and every method but GET, POST and DELETE (HEAD, PUT, TRACE, PROPFIND, …): 405 with Allow.
 * Elsewhere the same OPTIONS, and any method and path without a route (`/MCP`, `/mcp/`, `POST
 * /ws`): 404 ROUTE_NOT_FOUND, its body never read. A preflight from an origin not allowed: 403.
 */
export function registerEndpointMethods(app: FastifyInstance, options: EndpointMethodOptions): void {
  const endpoints = new Set(options.paths);
  // Callback form: the served methods pass without a promise made per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (SERVED.has(request.method) && !request.is404) return done();
    const refusal = refusalOf(request, endpoints.has(pathOf(request)), options);
    if (refusal) replyWithError(reply, options.diagnostics, refusal);
    else done();
  });
}

/** Why this request is refused; undefined for one a route serves (a good CORS preflight: @fastify/cors answers it). */
function refusalOf(request: FastifyRequest, endpoint: boolean, o: EndpointMethodOptions): GatewayError | undefined {
  if (request.method !== 'OPTIONS') {
    if (endpoint) return new GatewayError('METHOD_NOT_ALLOWED');
    return request.is404 ? routeNotFound(request) : undefined;
  }
  const origin = request.headers.origin;
  if (origin === undefined || request.headers['access-control-request-method'] === undefined) {
    if (!endpoint) return routeNotFound(request);
    return new GatewayError(
      'METHOD_NOT_ALLOWED',
      'Method Not Allowed: OPTIONS is answered only as a CORS preflight (Origin and Access-Control-Request-Method)',
    );
  }
  if (!o.isAllowedOrigin(origin)) return new GatewayError('ORIGIN_FORBIDDEN', `Origin not allowed: ${origin}`);
  return undefined;
}

/** A method and path no route serves (the method is Node's, one of its known few; the path is cut short). */
export function routeNotFound(request: FastifyRequest): GatewayError {
  const path = JSON.stringify(pathOf(request).slice(0, 200));
  return new GatewayError('ROUTE_NOT_FOUND', `Not Found: no route for ${request.method} ${path}`);
}
