import { GatewayError } from '../../jsonrpc/errors.js';
import { parseMessages, type JsonRpcMessage } from '../../jsonrpc/messages.js';
import { Abort } from '../../timing/abort.js';
import { Backoff, sleep } from '../../timing/backoff.js';
import { mediaType, retryAfterMs } from './http-endpoint.js';
import type { HttpUpstreamOptions } from './http.js';
import { DeadlineTimer } from '../../timing/deadline-timer.js';
import { startTimeoutMs } from '../connection/initialize.js';
import { BaseUpstream } from '../connection/base-upstream.js';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';
import { failureOf } from './http-exchange.js';
import { isRetryable } from '../connection/retry-policy.js';
import { messageData, readSse } from './sse-reader.js';
import type { CallOptions, UpstreamCall, UpstreamServerInfo } from '../../contracts/upstream.js';

/**
 * One session of the deprecated HTTP+SSE transport (2024-11-05), which many internal servers
 * still speak: a GET opens an SSE stream whose first event (`endpoint`) names where to POST;
 * every answer, progress and server request then arrives on that stream. The stream is the
 * session: when it ends, the worker exits and the pool starts another.
 */
export class LegacySseUpstream extends BaseUpstream {
  readonly #stream = new Abort();
  #postUrl: URL | undefined;
  #closed = false;
  #exited = false;

  constructor(private readonly options: HttpUpstreamOptions) {
    super(`${options.endpoint.name}#${options.index}`, options.peer, options.log);
  }

  protected send(message: JsonRpcMessage): void {
    this.#deliver(message).catch((err: unknown) =>
      this.options.log.error({ upstream: this.label, err }, 'unexpected error sending to upstream'),
    );
  }

  async start(): Promise<UpstreamServerInfo> {
    const { endpoint } = this.options;
    try {
      this.#postUrl = await this.#openStream(startTimeoutMs(endpoint.config.timeoutMs));
      this.serverInfo = await this.handshake(this.options.identity, endpoint.config.timeoutMs, {
        // Through this.call: its answer arrives on the stream, timed like any other call's.
        call: (method, params) => this.call(method, params),
        notify: (method) => this.#deliver({ jsonrpc: '2.0', method }),
      });
    } catch (err) {
      await this.close();
      throw err instanceof ExchangeFailure ? err.toGatewayError(endpoint.name) : err;
    }
    this.options.log.info(
      { upstream: this.label, server: this.serverInfo.serverInfo, version: this.serverInfo.protocolVersion },
      'upstream ready',
    );
    return this.serverInfo;
  }

  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    const { breaker, config } = this.options.endpoint;
    // Calls go as the gateway itself here (no caller): only the circuit can refuse one.
    const { refused } = this.options.endpoint.admit(undefined);
    if (refused) return refused;
    // The answer arrives on the shared stream, not on the POST: each call keeps its own deadline,
    // restarted by its progress, so a call nobody else times out (a list, a ping) cannot hang.
    let timer: DeadlineTimer | undefined;
    const onNotification = options?.onNotification;
    const call = this.connection.call(
      method,
      params,
      onNotification ? { onNotification: (n) => (timer?.touch(), onNotification(n)) } : options,
    );
    timer = new DeadlineTimer(config.timeoutMs, config.maxTimeoutMs, () => {
      breaker.failure('no answer in time');
      call.cancel(
        new GatewayError('UPSTREAM_TIMEOUT', `Upstream ${this.label} did not answer within ${config.timeoutMs} ms`),
      );
    });
    const stop = () => timer?.clear();
    call.promise.then(stop, stop);
    return {
      promise: call.promise,
      cancel: (error) => {
        stop();
        if (error instanceof GatewayError && error.type === 'UPSTREAM_TIMEOUT') breaker.failure(error.message);
        call.cancel(error);
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stream.abort();
    this.connection.close(new GatewayError('UPSTREAM_UNAVAILABLE', `${this.label} is shutting down`));
  }

  #die(reason: string): void {
    if (this.#exited || this.#closed) return;
    this.#exited = true;
    this.#stream.abort();
    this.connection.close(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.label} ${reason}`));
    this.options.log.warn({ upstream: this.label, reason }, 'upstream SSE session ended');
    this.emitExit(reason);
  }

  /** Opens the SSE stream; resolves with the POST URL from its `endpoint` event. */
  async #openStream(timeoutMs: number): Promise<URL> {
    const { endpoint, log } = this.options;
    const timer = setTimeout(
      () => this.#stream.abort(new ExchangeFailure('timeout', `no endpoint event within ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      const res = await endpoint.request({
        method: 'GET',
        url: endpoint.url,
        headers: { accept: 'text/event-stream' },
        abort: this.#stream,
      });
      if (res.status < 200 || res.status >= 300 || mediaType(res.headers) !== 'text/event-stream') {
        const text = await res.body.snippet();
        const failure = new ExchangeFailure(
          res.status >= 200 && res.status < 300 ? 'protocol' : 'status',
          `SSE endpoint answered HTTP ${res.status} ${mediaType(res.headers)}${text ? `: ${text}` : ''}`,
          res.status,
          retryAfterMs(res.headers),
        );
        if (failure.countsAsFailure) endpoint.breaker.failure(failure.message);
        throw failure;
      }
      endpoint.breaker.success();
      return await new Promise<URL>((resolve, reject) => {
        readSse(res.body, {
          onEvent: (event) => {
            if (event.event === 'endpoint') {
              const url = new URL(event.data.trim(), endpoint.url);
              // The session's credentials go wherever this points: never to another origin.
              if (url.origin !== endpoint.url.origin)
                throw new ExchangeFailure('protocol', `endpoint event names another origin (${url.origin})`);
              resolve(url);
              return;
            }
            const data = messageData(event);
            if (data === undefined) return;
            const messages = parseMessages(data);
            if (!messages) {
              log.warn(
                { upstream: this.label, data: data.slice(0, 200) },
                'upstream sent an SSE event that is not JSON; ignored',
              );
              return;
            }
            for (const m of messages) this.connection.receive(m);
          },
        }).then(
          () => {
            reject(new ExchangeFailure('cut', 'SSE stream ended before naming its endpoint'));
            this.#die('closed its SSE stream');
          },
          (err: unknown) => {
            const reason = this.#stream.aborted ? this.#stream.reason : err;
            reject(
              reason instanceof ExchangeFailure
                ? reason
                : new ExchangeFailure('cut', `SSE stream failed: ${String(reason)}`),
            );
            if (reason instanceof ExchangeFailure && reason.kind === 'protocol')
              endpoint.breaker.failure(reason.message);
            this.#die(`SSE stream failed (${reason instanceof Error ? reason.message : String(reason)})`);
          },
        );
      });
    } catch (err) {
      if (err instanceof ExchangeFailure || err instanceof GatewayError) throw err;
      throw this.#stream.reason instanceof ExchangeFailure ? this.#stream.reason : err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** POSTs one message; connection failures (and failures of idempotent requests) are retried. */
  async #deliver(message: JsonRpcMessage): Promise<void> {
    const { endpoint, log } = this.options;
    const method = 'method' in message ? message.method : undefined;
    const id = method !== undefined && 'id' in message && typeof message.id === 'number' ? message.id : undefined;
    const backoff = new Backoff({
      initialMs: endpoint.config.retry.initialDelayMs,
      maxMs: endpoint.config.retry.maxDelayMs,
    });
    for (let retries = 0; ; retries++) {
      if ((id !== undefined && !this.connection.has(id)) || this.#closed || this.#exited || !this.#postUrl) return;
      let failure: ExchangeFailure | GatewayError;
      try {
        await this.#post(this.#postUrl, message);
        return;
      } catch (err) {
        failure = failureOf(err);
      }
      if (failure instanceof ExchangeFailure && failure.status === 404) {
        this.#die('no longer knows its session (HTTP 404)');
        return;
      }
      if (
        failure instanceof ExchangeFailure &&
        retries < endpoint.config.retry.attempts &&
        isRetryable(method, failure)
      ) {
        endpoint.diagnostics.emit('upstream:retry', { upstream: endpoint.name, reason: failure.kind });
        await sleep(Math.max(failure.retryAfterMs ?? 0, backoff.next()));
        continue;
      }
      const error = failure instanceof ExchangeFailure ? failure.toGatewayError(endpoint.name) : failure;
      if (id === undefined)
        log.debug({ upstream: this.label, method, err: error.message }, 'message to upstream not delivered');
      else this.connection.fail(id, error);
      return;
    }
  }

  async #post(url: URL, message: JsonRpcMessage): Promise<void> {
    const { endpoint } = this.options;
    const abort = new Abort();
    const { timeoutMs, maxTimeoutMs } = endpoint.config;
    // The POST is only accepted here (202); the answer comes on the stream.
    const timer = new DeadlineTimer(timeoutMs, maxTimeoutMs, () =>
      abort.abort(new ExchangeFailure('timeout', `POST not accepted within ${timeoutMs} ms`)),
    );
    try {
      const res = await endpoint.request({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message),
        abort,
      });
      if (res.status >= 200 && res.status < 300) {
        await res.body.dump();
        endpoint.breaker.success();
        return;
      }
      const text = await res.body.snippet();
      throw new ExchangeFailure(
        'status',
        `answered HTTP ${res.status}${text ? `: ${text}` : ''}`,
        res.status,
        retryAfterMs(res.headers),
      );
    } catch (err) {
      const reason: unknown = abort.aborted ? abort.reason : err;
      if (
        reason instanceof ExchangeFailure &&
        reason.kind !== 'connect' &&
        reason.kind !== 'sent' &&
        reason.countsAsFailure &&
        reason.status !== 404
      ) {
        endpoint.breaker.failure(reason.message);
      }
      throw reason;
    } finally {
      timer.clear();
    }
  }
}
