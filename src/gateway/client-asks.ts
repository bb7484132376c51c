import { GatewayError, UpstreamRpcError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcMessage, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { clientAskId, replicaOfClientAsk } from '../contracts/client-ask-id.js';
import type { McpResult } from '../contracts/upstream.js';

interface Pending {
  scope: string;
  resolve: (result: McpResult) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  unlisten: () => void;
}

/**
 * Requests an upstream sends to its client (sampling, elicitation, roots), on their way to the
 * client under ids of the gateway's own, until the client's answer comes back in a POST.
 */
export class ClientAsks {
  #next = 1;
  readonly #pending = new Map<string, Pending>();

  /** `replicaId` goes into every id, so an answer that reaches another replica finds its way back. */
  constructor(private readonly replicaId: string) {}

  /** The replica that sent the request with this id, if the id is one of ours. */
  static replicaOf(id: string): string | undefined {
    return replicaOfClientAsk(id);
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * `deliver` puts the request on one of the client's streams; false when none is open.
   * `signal`: the worker that asked is gone; the request ends at once with the signal's reason.
   */
  send(
    scope: string,
    deliver: (message: JsonRpcMessage) => boolean,
    method: string,
    params: Record<string, unknown> | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<McpResult> {
    const id = clientAskId(this.replicaId, this.#next++);
    return new Promise<McpResult>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const message: JsonRpcMessage =
        params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
      if (!deliver(message)) {
        reject(new GatewayError('UPSTREAM_UNAVAILABLE', `The client has no open stream to receive ${method}`));
        return;
      }
      const onAbort = () => {
        const pending = this.#settle(id);
        if (!pending) return;
        const reason = abortReason(signal!);
        pending.reject(reason);
        // The client may be showing a question (elicitation) nobody waits for any more.
        deliver({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: reason.message },
        });
      };
      const timer = setTimeout(() => {
        this.#settle(id)?.reject(
          new GatewayError('UPSTREAM_TIMEOUT', `The client did not answer ${method} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        scope,
        resolve,
        reject,
        timer,
        unlisten: () => signal?.removeEventListener('abort', onAbort),
      });
    });
  }

  /** A response from the client; false when it answers nothing we asked in this scope. */
  receive(scope: string, response: JsonRpcResponse): boolean {
    const id = response.id;
    const pending = typeof id === 'string' ? this.#pending.get(id) : undefined;
    if (!pending || pending.scope !== scope) return false;
    this.#settle(id as string);
    if ('error' in response) pending.reject(new UpstreamRpcError(response.error));
    else if (isObject(response.result)) pending.resolve(response.result);
    else pending.reject(new GatewayError('INVALID_PARAMS', 'The client answered with a result that is not an object'));
    return true;
  }

  cancelScope(scope: string): void {
    for (const [id, p] of this.#pending) {
      if (p.scope === scope) this.#settle(id)?.reject(new GatewayError('REQUEST_CANCELLED', 'Session ended'));
    }
  }

  /** Takes request `id` out of the table, its timer and abort listener with it. */
  #settle(id: string): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    pending.unlisten();
    return pending;
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new GatewayError('REQUEST_CANCELLED', 'The worker that asked has stopped');
}
