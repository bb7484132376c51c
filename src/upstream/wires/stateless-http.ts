import type { Logger } from 'pino';
import { GatewayError } from '../../jsonrpc/errors.js';
import type { JsonRpcMessage, JsonRpcNotification } from '../../jsonrpc/messages.js';
import { Abort } from '../../timing/abort.js';
import { Backoff, sleep } from '../../timing/backoff.js';
import type { CallOptions, UpstreamCall } from '../../contracts/upstream.js';
import { JsonRpcConnection } from '../connection/json-rpc-connection.js';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';
import { isRetryable } from '../connection/retry-policy.js';
import type { CallerAuth, HttpEndpoint } from './http-endpoint.js';
import { CallersInFlight, Cancelled, exchange, failureOf, sentCall, type Outcome } from './http-exchange.js';
import { ListenStream } from './http-get-stream.js';
import { MCP_NAME_PARAM } from '../../jsonrpc/meta-keys.js';
import { headerValue } from '../connection/stateless-headers.js';

/** The stateless revision this wire speaks. */
export const STATELESS_REVISION = '2026-07-28';

/**
 * The standard headers of one 2026-07-28 request: the version, Mcp-Method, and Mcp-Name where
 * the method has one; `extra` (mirrored Mcp-Param-* headers) beside them.
 */
export function statelessHeaders(
  method: string,
  params: Record<string, unknown> | undefined,
  extra?: Readonly<Record<string, string>>,
): Record<string, string> {
  const headers: Record<string, string> = {
    ...extra,
    'mcp-protocol-version': STATELESS_REVISION,
    'mcp-method': method,
  };
  const key = MCP_NAME_PARAM.get(method);
  const name = key === undefined ? undefined : params?.[key];
  if (typeof name === 'string') headers['mcp-name'] = headerValue(name);
  return headers;
}

/**
 * The wire to a 2026-07-28 upstream over Streamable HTTP: each request is a POST of its own,
 * carrying everything about its client in `_meta` and the mirrored headers; no session, no
 * initialize, no GET stream. Its answers (a JSON body, or an SSE reply with progress first) go
 * into one JsonRpcConnection, which gives every request an id and progress token unique here.
 * Cancelling a request closes its reply stream, which is how that revision cancels.
 */
export class StatelessHttpWire {
  readonly #connection: JsonRpcConnection;
  readonly #aborts = new Map<number, Abort>();
  /** The extra headers of the request being sent (JsonRpcConnection.call sends synchronously). */
  #pendingHeaders: Readonly<Record<string, string>> | undefined;
  /** Who the request being sent is for, when the upstream acts for users (same synchronous window). */
  #pendingCaller: CallerAuth | undefined;
  /** Calls made for a user, by our id: each of their POSTs (retries too) goes as that user. */
  readonly #callers = new CallersInFlight();
  #listen: ListenStream | undefined;
  #closed = false;

  constructor(
    private readonly endpoint: HttpEndpoint,
    private readonly log: Logger,
    onNotification: (notification: JsonRpcNotification) => void,
  ) {
    this.#connection = new JsonRpcConnection((m) => this.#send(m), {
      onRequest: async (request) => {
        throw new GatewayError(
          'METHOD_NOT_FOUND',
          `${request.method}: a 2026-07-28 server asks its client by input_required results, not by requests`,
        );
      },
      onNotification,
      onProtocolError: (reason) => log.warn({ upstream: endpoint.name, reason }, 'upstream sent an invalid message'),
      onCallSettled: () => undefined,
    });
  }

  get inFlight(): number {
    return this.#connection.inFlight;
  }

  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    const { refused, auth } = this.endpoint.admit(options?.caller);
    if (refused) return refused;
    this.#pendingHeaders = options?.headers;
    this.#pendingCaller = auth;
    let call;
    try {
      call = this.#connection.call(method, params, options);
    } finally {
      this.#pendingHeaders = undefined;
      this.#pendingCaller = undefined;
    }
    return sentCall(call, auth, this.#callers, this.#aborts, (error) => this.#connection.fail(call.id, error));
  }

  /**
   * Opens `subscriptions/listen` with `filter` (and `meta`, the gateway's own request `_meta`),
   * kept open and reopened with backoff; what it carries goes to the connection's notification
   * handler. Called again, the stream is replaced by one with the new filter.
   */
  listen(filter: Record<string, unknown>, meta: Record<string, unknown>): void {
    if (this.#closed) return;
    // A new filter (another resource to watch) replaces the stream: the upstream acknowledges it anew.
    this.#listen?.stop();
    let n = 0;
    this.#listen = new ListenStream({
      label: `${this.endpoint.name}#listen`,
      endpoint: this.endpoint,
      headers: () => ({}),
      post: () => {
        const params = { notifications: filter, _meta: meta };
        return {
          headers: statelessHeaders('subscriptions/listen', params),
          body: JSON.stringify({ jsonrpc: '2.0', id: `listen-${++n}`, method: 'subscriptions/listen', params }),
        };
      },
      onMessage: (m) => this.#connection.receive(m),
      // No session to lose: a refused stream is opened again later.
      onSessionLost: () => undefined,
      log: this.log,
    });
    this.#listen.start();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#listen?.stop();
    const error = new GatewayError('UPSTREAM_UNAVAILABLE', `${this.endpoint.name} is shutting down`);
    this.#connection.close(error);
    for (const abort of this.#aborts.values()) abort.abort(new Cancelled(error));
  }

  #send(message: JsonRpcMessage): void {
    // The revision has no client notifications worth a POST (cancelling closes the reply) and no answers to give.
    if (!('method' in message) || !('id' in message) || typeof message.id !== 'number') return;
    const headers = statelessHeaders(message.method, message.params, this.#pendingHeaders);
    if (this.#pendingCaller !== undefined) this.#callers.set(message.id, this.#pendingCaller);
    this.#deliver(message, message.id, message.method, headers).catch((err: unknown) =>
      this.log.error({ upstream: this.endpoint.name, err }, 'unexpected error sending to upstream'),
    );
  }

  /** One request until it is answered, retried as the retry policy allows, or failed with a typed error. */
  async #deliver(message: JsonRpcMessage, id: number, method: string, headers: Record<string, string>): Promise<void> {
    const { retry } = this.endpoint.config;
    const backoff = new Backoff({ initialMs: retry.initialDelayMs, maxMs: retry.maxDelayMs });
    for (let retries = 0; ; retries++) {
      if (!this.#connection.has(id) || this.#closed) return;
      const abort = new Abort();
      this.#aborts.set(id, abort);
      let outcome: Outcome;
      try {
        outcome = await exchange({
          endpoint: this.endpoint,
          connection: this.#connection,
          message,
          id,
          method,
          sessionHeaders: headers,
          caller: this.#callers.get(id),
          errorsWithStatus: true,
          logsOnReply: true,
          refusalAnswers: method === 'server/discover',
          generation: 0,
          resumeFrom: undefined,
          abort,
          onSessionId: () => undefined,
        });
      } catch (err) {
        outcome = { kind: 'failed', failure: failureOf(err) };
      } finally {
        if (this.#aborts.get(id) === abort) this.#aborts.delete(id);
      }
      if (outcome.kind === 'done') return;
      // Stateless: there is no stream to resume and no session to lose.
      const failure =
        outcome.kind === 'failed' ? outcome.failure : new ExchangeFailure('cut', 'closed the stream before answering');
      if (failure instanceof ExchangeFailure && retries < retry.attempts && isRetryable(method, failure)) {
        this.endpoint.diagnostics.emit('upstream:retry', { upstream: this.endpoint.name, reason: failure.kind });
        await sleep(Math.max(failure.retryAfterMs ?? 0, backoff.next()));
        continue;
      }
      this.#connection.fail(
        id,
        failure instanceof ExchangeFailure ? failure.toGatewayError(this.endpoint.name) : failure,
      );
      return;
    }
  }
}
