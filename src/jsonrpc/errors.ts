/**
 * Errors as thrown on the data path and as sent: GatewayError carries an entry of the one error table
 * (error-table.ts), re-exported here so that callers import errors from one place.
 */
import { ERRORS, type ErrorEntry, type ErrorName } from './error-table.js';
import type { JsonRpcErrorObject, JsonRpcId } from './messages.js';

export { ERRORS, type ErrorEntry, type ErrorName };

/** Thrown anywhere on the data path; the transport turns it into a reply. */
export class GatewayError extends Error {
  readonly type: ErrorName;
  readonly entry: ErrorEntry;
  readonly detail: Record<string, unknown> | undefined;

  constructor(type: ErrorName, message?: string, detail?: Record<string, unknown>) {
    const entry: ErrorEntry = ERRORS[type];
    super(message ?? entry.message);
    this.name = 'GatewayError';
    this.type = type;
    this.entry = entry;
    this.detail = detail;
  }

  toJsonRpc(): JsonRpcErrorObject {
    const data = { type: this.type, ...(this.entry.retryable && { retryable: true }), ...this.detail };
    return { code: this.entry.code, message: this.message, data };
  }
}

/** A rejection whose HTTP reply carries a `WWW-Authenticate` challenge (RFC 6750). */
export class AuthChallenge extends GatewayError {
  constructor(
    type: 'UNAUTHORIZED' | 'INSUFFICIENT_SCOPE',
    message: string,
    readonly challenge: string,
  ) {
    super(type, message);
  }
}

export function errorObject(type: ErrorName, message?: string, detail?: Record<string, unknown>): JsonRpcErrorObject {
  return new GatewayError(type, message, detail).toJsonRpc();
}

/** An error an upstream sent us: passed to the client as it was, code and all. */
export class UpstreamRpcError extends Error {
  constructor(readonly error: JsonRpcErrorObject) {
    super(error.message);
    this.name = 'UpstreamRpcError';
  }
}

/** Any thrown value → the JSON-RPC error object a client sees. Unknown errors never leak details. */
export function toErrorObject(err: unknown): JsonRpcErrorObject {
  if (err instanceof GatewayError) return err.toJsonRpc();
  if (err instanceof UpstreamRpcError) return err.error;
  return errorObject('INTERNAL_ERROR');
}

export function errorResponse(id: JsonRpcId | null, error: JsonRpcErrorObject) {
  return { jsonrpc: '2.0' as const, id, error };
}
