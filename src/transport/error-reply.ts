import type { FastifyReply } from 'fastify';
import { AuthChallenge, GatewayError, errorResponse, type ErrorName } from '../jsonrpc/errors.js';
import type { JsonRpcId } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';

/** The HTTP methods of the MCP endpoint, as a 405 names them. */
export const ALLOW = 'GET, POST, DELETE';

/** Thrown while serving a request to answer with one error from the table, about the JSON-RPC request `id`. */
export class Rejection extends GatewayError {
  constructor(
    type: ErrorName,
    message?: string,
    readonly id: JsonRpcId | null = null,
    detail?: Record<string, unknown>,
  ) {
    super(type, message, detail);
  }
}

/** One error of the table as the whole reply: its HTTP status, a JSON-RPC error body, the headers it calls for (published as transport:rejection). */
export function replyWithError(reply: FastifyReply, diagnostics: DataPathEvents, err: GatewayError, id: JsonRpcId | null = null): FastifyReply {
  diagnostics.emit('transport:rejection', { errorType: err.type });
  if (err.entry.httpStatus === 405) reply.header('allow', ALLOW);
  if (err instanceof AuthChallenge) reply.header('www-authenticate', err.challenge);
  if (err.entry.retryable) reply.header('retry-after', String(Math.max(1, Math.ceil(Number(err.detail?.retryAfterMs ?? 1000) / 1000))));
  return reply
    .code(err.entry.httpStatus)
    .header('content-type', 'application/json')
    .send(JSON.stringify(errorResponse(id, err.toJsonRpc())));
}

/** Whatever a request handler threw, as the reply: errors of the table as themselves, anything else as INTERNAL_ERROR (and logged). */
export function replyWithFailure(reply: FastifyReply, diagnostics: DataPathEvents, err: unknown): void {
  if (err instanceof Rejection) replyWithError(reply, diagnostics, err, err.id);
  else if (err instanceof GatewayError) replyWithError(reply, diagnostics, err);
  else {
    reply.log.error({ err }, 'transport failure');
    replyWithError(reply, diagnostics, new GatewayError('INTERNAL_ERROR'));
  }
}
