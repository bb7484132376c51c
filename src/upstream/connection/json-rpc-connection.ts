import { GatewayError, UpstreamRpcError, errorObject, toErrorObject } from '../../jsonrpc/errors.js';
import {
  classify,
  isObject,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../../jsonrpc/messages.js';
import type { CallOptions, McpResult, UpstreamCall } from '../../contracts/upstream.js';

type ProgressToken = string | number;

/** A call on one connection; `id` is the JSON-RPC id it went out under (ours, unique here). */
export interface ConnectionCall extends UpstreamCall {
  readonly id: number;
}

/** Request correlation for one upstream connection: our own ids, our own progress tokens. */
class PendingCall implements ConnectionCall {
  readonly promise: Promise<McpResult>;
  /** What its request weighed on the wire (0 where the wire does not say). */
  bytes = 0;
  resolve!: (result: McpResult) => void;
  reject!: (error: Error) => void;

  constructor(
    readonly id: number,
    readonly clientToken: ProgressToken | undefined,
    readonly onNotification: ((n: JsonRpcNotification) => void) | undefined,
    private readonly connection: JsonRpcConnection,
  ) {
    this.promise = new Promise<McpResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  cancel(error: Error): void {
    this.connection.cancel(this.id, error);
  }
}

export interface ConnectionHandlers {
  /**
   * A request the upstream sends us; the returned result (or thrown error) is its answer.
   * `signal` aborts when the upstream cancels it (notifications/cancelled) or the connection ends.
   */
  onRequest(request: JsonRpcRequest, signal: AbortSignal): Promise<McpResult>;
  /** A notification not related to any call of ours (logging, list_changed, …). */
  onNotification(notification: JsonRpcNotification): void;
  /** A line that is not a JSON-RPC message, or a response to nothing. */
  onProtocolError(reason: string): void;
  onCallSettled(): void;
}

export class JsonRpcConnection {
  #nextId = 1;
  readonly #pending = new Map<number, PendingCall>();
  #pendingBytes = 0;
  /** Requests of the upstream we have not answered yet, by its id: what its cancellations name. */
  readonly #incoming = new Map<JsonRpcId, AbortController>();
  #closedWith: GatewayError | undefined;

  constructor(
    /** Returns what the message weighs on the wire where it is written in order (stdio), else nothing. */
    private readonly send: (message: JsonRpcMessage) => number | void,
    private readonly handlers: ConnectionHandlers,
  ) {}

  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * What the unanswered calls' requests weigh: on a wire that carries them in order, what a new
   * call waits behind (a 3.5 MB call and a 30-byte one are not the same load).
   */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** Whether request `id` still waits for its answer. */
  has(id: number): boolean {
    return this.#pending.has(id);
  }

  call(method: string, params: Record<string, unknown> | undefined, options: CallOptions = {}): ConnectionCall {
    const id = this.#nextId++;
    const meta = params?._meta;
    const clientToken = isObject(meta) ? (meta.progressToken as ProgressToken | undefined) : undefined;
    const call = new PendingCall(id, clientToken, options.onNotification, this);
    if (this.#closedWith) {
      call.reject(this.#closedWith);
      return call;
    }
    let outParams = params;
    if (clientToken !== undefined && isObject(meta)) {
      // Our id doubles as the progress token: unique on this connection by construction.
      outParams = { ...params, _meta: { ...meta, progressToken: id } };
    }
    this.#pending.set(id, call);
    try {
      const out: JsonRpcRequest =
        outParams === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: outParams };
      call.bytes = this.send(out) ?? 0;
      this.#pendingBytes += call.bytes;
    } catch (err) {
      // A message the wire cannot carry (JSON.stringify throws) must not keep its slot.
      this.#forget(call);
      call.reject(
        new GatewayError(
          'INVALID_PARAMS',
          `The request cannot be sent to the upstream: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    }
    return call;
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.#closedWith) return;
    this.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  cancel(id: number, error: Error): void {
    if (!this.#pending.has(id)) return;
    this.notify('notifications/cancelled', { requestId: id, reason: error.message });
    this.fail(id, error);
  }

  /**
   * Rejects a pending call without telling the upstream: for a request that never reached it
   * (a transport that could not send it), where a cancellation would be noise.
   */
  fail(id: number, error: Error): void {
    const call = this.#pending.get(id);
    if (!call) return;
    this.#forget(call);
    call.reject(error);
    this.handlers.onCallSettled();
  }

  /** Fails every pending call with `error` and refuses new ones. */
  close(error: GatewayError): void {
    if (this.#closedWith) return;
    this.#closedWith = error;
    for (const controller of this.#incoming.values()) controller.abort(error);
    this.#incoming.clear();
    const calls = [...this.#pending.values()];
    this.#pending.clear();
    this.#pendingBytes = 0;
    for (const call of calls) call.reject(error);
    if (calls.length > 0) this.handlers.onCallSettled();
  }

  #forget(call: PendingCall): void {
    if (this.#pending.delete(call.id)) this.#pendingBytes -= call.bytes;
  }

  /** `replyOf`: the request whose own reply carried the message (2026-07-28: its log messages are that request's). */
  receive(value: unknown, replyOf?: number): void {
    const c = classify(value);
    switch (c.kind) {
      case 'response': {
        const { id } = c.message;
        const call = typeof id === 'number' ? this.#pending.get(id) : undefined;
        if (!call) {
          this.handlers.onProtocolError(`response to unknown request id ${JSON.stringify(id)}`);
          return;
        }
        this.#forget(call);
        if ('error' in c.message) call.reject(new UpstreamRpcError(c.message.error));
        else if (isObject(c.message.result)) call.resolve(c.message.result);
        else call.reject(new GatewayError('UPSTREAM_PROTOCOL_ERROR', 'Upstream result is not an object'));
        this.handlers.onCallSettled();
        return;
      }
      case 'notification':
        this.#onNotification(c.message, replyOf);
        return;
      case 'request':
        this.#onRequest(c.message);
        return;
      case 'invalid':
        this.handlers.onProtocolError(c.reason);
        return;
    }
  }

  #onNotification(n: JsonRpcNotification, replyOf: number | undefined): void {
    if (n.method === 'notifications/cancelled') {
      // The upstream no longer wants the answer to a request of its own: its id means nothing
      // to anyone but us, so the cancellation stops here (the peer tells the client its own way).
      const id = n.params?.requestId;
      const controller = typeof id === 'string' || typeof id === 'number' ? this.#incoming.get(id) : undefined;
      if (controller) {
        this.#incoming.delete(id as JsonRpcId);
        const reason = typeof n.params?.reason === 'string' ? `: ${n.params.reason}` : '';
        controller.abort(new GatewayError('REQUEST_CANCELLED', `The upstream cancelled its request${reason}`));
        return;
      }
    }
    if (n.method === 'notifications/progress') {
      const token = n.params?.progressToken;
      const call = typeof token === 'number' ? this.#pending.get(token) : undefined;
      // Progress for a finished or unknown request is dropped: nothing may follow a response.
      if (!call || call.clientToken === undefined) return;
      call.onNotification?.({ ...n, params: { ...n.params, progressToken: call.clientToken } });
      return;
    }
    if (replyOf !== undefined && n.method === 'notifications/message') {
      // No session carries it: the caller of the request it came with judges it (its client's level), or nobody.
      this.#pending.get(replyOf)?.onNotification?.(n);
      return;
    }
    this.handlers.onNotification(n);
  }

  #onRequest(request: JsonRpcRequest): void {
    const controller = new AbortController();
    this.#incoming.set(request.id, controller);
    const reply = (id: JsonRpcId, body: { result: McpResult } | { error: ReturnType<typeof errorObject> }) => {
      if (this.#incoming.get(id) === controller) this.#incoming.delete(id);
      // A cancelled request is not answered (the upstream has moved on).
      if (!this.#closedWith && !controller.signal.aborted) this.send({ jsonrpc: '2.0', id, ...body } as JsonRpcMessage);
    };
    this.handlers.onRequest(request, controller.signal).then(
      (result) => reply(request.id, { result }),
      (err: unknown) => reply(request.id, { error: toErrorObject(err) }),
    );
  }
}
