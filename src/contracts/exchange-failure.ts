// How an HTTP exchange with an upstream or an authorization server failed: thrown by the wires
// and the OAuth clients alike, and read by the retry policy, the breaker and server/'s OAuth
// routes, so it belongs to none of them.
import { GatewayError } from '../jsonrpc/errors.js';

/**
 * How one HTTP exchange with a remote upstream failed:
 * - `connect`: no connection was made, so the upstream never saw the request;
 * - `sent`: the connection broke after the request went out, before an answer;
 * - `status`: the upstream answered with an HTTP error status;
 * - `cut`: an SSE reply ended before the JSON-RPC response arrived;
 * - `protocol`: the answer is not MCP (wrong content type, not JSON, not JSON-RPC);
 * - `timeout`: no sign of life within timeoutMs.
 */
export type FailureKind = 'connect' | 'sent' | 'status' | 'cut' | 'protocol' | 'timeout';

export class ExchangeFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status?: number,
    /** From a Retry-After header, when the upstream sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ExchangeFailure';
  }

  /** The error the caller sees once retries are spent. */
  toGatewayError(upstream: string): GatewayError {
    const detail = { upstream, ...(this.status !== undefined ? { httpStatus: this.status } : {}) };
    const message = `Upstream ${upstream}: ${this.message}`;
    switch (this.kind) {
      case 'protocol':
        return new GatewayError('UPSTREAM_PROTOCOL_ERROR', message, detail);
      case 'timeout':
        return new GatewayError('UPSTREAM_TIMEOUT', message, detail);
      case 'status':
        if (this.status === 429) {
          return new GatewayError('OVERLOADED', message, { ...detail, retryAfterMs: this.retryAfterMs ?? 1000 });
        }
        if (this.status !== undefined && this.status < 500) {
          return new GatewayError('UPSTREAM_PROTOCOL_ERROR', message, detail);
        }
        return new GatewayError('UPSTREAM_UNAVAILABLE', message, {
          ...detail,
          ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
        });
      default:
        return new GatewayError('UPSTREAM_UNAVAILABLE', message, detail);
    }
  }

  /** Whether this says the upstream is unwell (a 429 says it is busy, which is not the same). */
  get countsAsFailure(): boolean {
    return !(this.kind === 'status' && this.status === 429);
  }
}
