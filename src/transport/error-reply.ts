import { STATUS_CODES } from 'node:http';
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

  /**
   * `err` as the answer to request `id`: a GatewayError keeps its type, message and detail; anything else stays as it
   * is.
   */
  static answering(err: unknown, id: JsonRpcId | null): unknown {
    return err instanceof GatewayError && !(err instanceof Rejection)
      ? new Rejection(err.type, err.message, id, err.detail)
      : err;
  }
}

/**
 * One error of the table as the whole reply: its HTTP status, a JSON-RPC error body, the headers it calls for
 * (published as transport:rejection).
 */
export function replyWithError(
  reply: FastifyReply,
  diagnostics: DataPathEvents,
  err: GatewayError,
  id: JsonRpcId | null = null,
): FastifyReply {
  diagnostics.emit('transport:rejection', { errorType: err.type });
  if (err.entry.httpStatus === 405) reply.header('allow', ALLOW);
  if (err instanceof AuthChallenge) reply.header('www-authenticate', err.challenge);
  if (err.entry.retryable)
    reply.header('retry-after', String(Math.max(1, Math.ceil(Number(err.detail?.retryAfterMs ?? 1000) / 1000))));
  return reply
    .code(err.entry.httpStatus)
    .header('content-type', 'application/json')
    .send(JSON.stringify(errorResponse(id, err.toJsonRpc())));
}

/**
 * Whatever a request handler threw, as the reply: errors of the table as themselves, anything else as INTERNAL_ERROR
 * (and logged).
 */
export function replyWithFailure(reply: FastifyReply, diagnostics: DataPathEvents, err: unknown): void {
  if (err instanceof Rejection) replyWithError(reply, diagnostics, err, err.id);
  else if (err instanceof GatewayError) replyWithError(reply, diagnostics, err);
  else {
    reply.log.error({ err }, 'transport failure');
    replyWithError(reply, diagnostics, new GatewayError('INTERNAL_ERROR'));
  }
}

/** What Fastify itself refuses a request with: its `statusCode` and `code` (FST_ERR_…). */
export interface FrameworkError {
  statusCode?: number;
  code?: string;
}

/**
 * Fastify's own refusal of a request (a body too large, of a type no parser takes, not the JSON its
 * Content-Type says, a URL it cannot decode) as the error of the table; undefined for anything else
 * (a 5xx, or no refusal of Fastify's at all: a failure of the gateway's, answered INTERNAL_ERROR).
 */
export function frameworkRefusal(err: FrameworkError, bodyLimit: number): GatewayError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('PARSE_ERROR', 'Parse error: Content-Type is application/json but the body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('PARSE_ERROR', 'Parse error: the body is not valid JSON');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new GatewayError('INVALID_REQUEST', 'Invalid Request: the URL cannot be decoded, or a part is too long');
    default:
      break; // by its status, below
  }
  const status = err.statusCode ?? 500;
  if (status === 413) {
    return new GatewayError('PAYLOAD_TOO_LARGE', `Payload Too Large: the limit is ${bodyLimit} bytes`);
  }
  if (status === 415) return new GatewayError('UNSUPPORTED_MEDIA_TYPE');
  if (status >= 400 && status < 500) return new GatewayError('PARSE_ERROR', 'Parse error: body could not be read');
  return undefined;
}

/**
 * One error of the table as a whole HTTP/1.1 reply, for a socket no Fastify reply owns (what Node
 * or ws refuses before any route): the connection is closed after it.
 */
export function rawErrorReply(err: GatewayError, headers: Record<string, string> = {}): string {
  const body = JSON.stringify(errorResponse(null, err.toJsonRpc()));
  const status = err.entry.httpStatus;
  const length = String(Buffer.byteLength(body));
  const head = { 'content-type': 'application/json', 'content-length': length, ...headers, connection: 'close' };
  const lines = Object.entries(head)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${lines}\r\n${body}`;
}
