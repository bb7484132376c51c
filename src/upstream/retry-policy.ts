import { GatewayError } from '../jsonrpc/errors.js';

/**
 * Requests that read and change nothing, so sending one again after a failure of unknown
 * effect is safe. `tools/call` is not among them: a tool may have side effects, and MCP has no
 * way to say it has none. `initialize` is not either: a second one would leave an orphan
 * session on the upstream (a failed start is retried by the pool instead).
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'ping',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
]);

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
        if (this.status === 429) return new GatewayError('OVERLOADED', message, { ...detail, retryAfterMs: this.retryAfterMs ?? 1000 });
        if (this.status !== undefined && this.status < 500) return new GatewayError('UPSTREAM_PROTOCOL_ERROR', message, detail);
        return new GatewayError('UPSTREAM_UNAVAILABLE', message, { ...detail, ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}) });
      default:
        return new GatewayError('UPSTREAM_UNAVAILABLE', message, detail);
    }
  }

  /** Whether this says the upstream is unwell (a 429 says it is busy, which is not the same). */
  get countsAsFailure(): boolean {
    return !(this.kind === 'status' && this.status === 429);
  }
}

/**
 * Whether an exchange that failed this way may be tried again: always when the request never
 * left (a connection failure), otherwise only for idempotent requests and only for failures a
 * second try can cure (a broken connection or stream, a 5xx other than 501/505, a 429).
 */
export function isRetryable(method: string | undefined, failure: ExchangeFailure): boolean {
  if (failure.kind === 'connect') return true;
  if (method === undefined || !IDEMPOTENT_METHODS.has(method)) return false;
  switch (failure.kind) {
    case 'sent':
    case 'cut':
      return true;
    case 'status':
      return failure.status === 429 || (failure.status !== undefined && failure.status >= 500 && failure.status !== 501 && failure.status !== 505);
    default:
      return false;
  }
}
