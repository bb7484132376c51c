// What Fastify would answer in its own shapes ({statusCode, error, message}) when no route does:
// a URL it cannot decode, a request with no route, a body it refuses, a failure no route caught.
// Each is answered here as an error of the table, like every other refusal of the gateway.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DataPathEvents } from '../observability/events.js';
import { frameworkRefusal, replyWithFailure } from '../transport/error-reply.js';
import { routeNotFound } from './endpoint-methods.js';

type ErrorHandler = (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;

/** Fastify's refusals as the table's errors; anything else as INTERNAL_ERROR (logged). */
function answer(diagnostics: DataPathEvents, bodyLimit: number): ErrorHandler {
  return (err, _request, reply) => replyWithFailure(reply, diagnostics, frameworkRefusal(err, bodyLimit) ?? err);
}

/** Fastify's `frameworkErrors` option: a URL its router cannot decode (`/%`), answered before any hook. */
export function frameworkErrors(diagnostics: DataPathEvents, bodyLimit: number): ErrorHandler {
  return answer(diagnostics, bodyLimit);
}

/**
 * The app's 404 and error handlers, for every scope that has none of its own (the MCP endpoints'
 * have: request-door.ts). A request without a route is answered by endpoint-methods.ts before its
 * body is read; this 404 handler is for the rest (a route that calls for it). Bodies Fastify parses
 * for other routes (`DELETE /oauth/tokens/x` with Content-Type application/json and no body) are
 * refused 400 in the table's terms.
 */
export function registerRouteErrors(app: FastifyInstance, diagnostics: DataPathEvents, bodyLimit: number): void {
  app.setNotFoundHandler((request, reply) => replyWithFailure(reply, diagnostics, routeNotFound(request)));
  app.setErrorHandler(answer(diagnostics, bodyLimit));
}
