import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../jsonrpc/errors.js';
import type { Metrics } from '../observability/metrics.js';
import { replyWithError } from './error-reply.js';

export interface PreflightOptions {
  /** The MCP endpoint. */
  path: string;
  isAllowedOrigin: (origin: string | undefined) => boolean;
  metrics: Metrics;
}

function pathOf(request: FastifyRequest): string {
  const q = request.url.indexOf('?');
  return q === -1 ? request.url : request.url.slice(0, q);
}

/**
 * OPTIONS on the MCP endpoint exists for CORS preflights, which @fastify/cors answers (204).
 * What it is not, @fastify/cors would answer in its own terms (400 text/plain, or 404): this
 * hook, added before that plugin, answers in JSON-RPC instead. Not a preflight (no Origin, or
 * no Access-Control-Request-Method): 405; a preflight from an origin not allowed: 403.
 */
export function registerPreflightCheck(app: FastifyInstance, options: PreflightOptions): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'OPTIONS' || pathOf(request) !== options.path) return undefined;
    const origin = request.headers.origin;
    if (origin === undefined || request.headers['access-control-request-method'] === undefined) {
      return replyWithError(reply, options.metrics, new GatewayError('METHOD_NOT_ALLOWED', 'Method Not Allowed: OPTIONS is answered only as a CORS preflight (Origin and Access-Control-Request-Method)'));
    }
    if (!options.isAllowedOrigin(origin)) {
      return replyWithError(reply, options.metrics, new GatewayError('ORIGIN_FORBIDDEN', `Origin not allowed: ${origin}`));
    }
    return undefined;
  });
}
