import type { Logger } from 'pino';
import { parseMessages } from '../../jsonrpc/messages.js';
import { Abort } from '../../timing/abort.js';
import { Backoff } from '../../timing/backoff.js';
import { mediaType, type CallerAuth, type HttpEndpoint } from './http-endpoint.js';
import { messageData, readSse } from './sse-reader.js';

export interface ListenStreamOptions {
  label: string;
  endpoint: HttpEndpoint;
  /** The session's headers at the time of each (re)connection. */
  headers: () => Record<string, string>;
  onMessage(value: unknown): void;
  /** The upstream no longer knows the session (404): the owner re-initializes and opens a new stream. */
  onSessionLost(): void;
  log: Logger;
  /** A 2026-07-28 upstream's `subscriptions/listen`: the stream is this POST's reply, not a GET. */
  post?: () => { headers: Record<string, string>; body: string };
  /** The user a per-session worker goes as (its stream too). */
  caller?: () => CallerAuth | undefined;
}

/**
 * The GET stream of one upstream session: where a Streamable HTTP server sends what relates to
 * no request of ours (list_changed, resources/updated, logging, its own requests). It is quiet
 * for as long as the server has nothing to say, so it has no idle timeout. When it ends or
 * breaks it is opened again with backoff, resuming after the last event id the server gave;
 * when the circuit closes after an outage it is opened at once.
 */
export class ListenStream {
  readonly #abort = new Abort();
  readonly #backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
  #stopped = false;
  #wake: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(private readonly options: ListenStreamOptions) {}

  start(): void {
    this.#unsubscribe = this.options.endpoint.breaker.onChange((state) => {
      if (state === 'closed') this.#wake?.();
    });
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#abort.abort();
    this.#wake?.();
  }

  async #run(): Promise<void> {
    const { endpoint, log, label } = this.options;
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    while (!this.#stopped) {
      // While the circuit is not closed, the health probe finds out whether the upstream is back;
      // a GET here would only take its place. The stream is opened at once when it closes.
      if (endpoint.breaker.state !== 'closed') {
        await this.#sleep(this.#backoff.next());
        continue;
      }
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', ...this.options.headers() };
        if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
        const post = this.options.post?.();
        const caller = this.options.caller?.();
        const as = caller ? { caller } : {};
        const res = post
          ? await endpoint.request({
              method: 'POST',
              url: endpoint.url,
              headers: {
                ...post.headers,
                accept: 'application/json, text/event-stream',
                'content-type': 'application/json',
              },
              body: post.body,
              abort: this.#abort,
              ...as,
            })
          : await endpoint.request({ method: 'GET', url: endpoint.url, headers, abort: this.#abort, ...as });
        if (res.status === 405) {
          await res.body.dump();
          log.debug({ upstream: label }, 'upstream offers no GET stream');
          return;
        }
        if (res.status < 200 || res.status >= 300 || mediaType(res.headers) !== 'text/event-stream') {
          const text = await res.body.snippet();
          if (res.status === 404 || (res.status === 400 && /session/i.test(text))) {
            this.options.onSessionLost();
            return;
          }
          throw new Error(`GET stream answered HTTP ${res.status} ${mediaType(res.headers)}${text ? `: ${text}` : ''}`);
        }
        endpoint.breaker.success();
        await readSse(res.body, {
          onRetry: (ms) => {
            retryMs = ms;
          },
          onEvent: (event) => {
            this.#backoff.reset();
            if (event.id !== undefined) lastEventId = event.id;
            const data = messageData(event);
            if (data === undefined) return;
            const messages = parseMessages(data);
            if (!messages) {
              log.warn(
                { upstream: label, data: data.slice(0, 200) },
                'upstream sent a GET stream event that is not JSON; ignored',
              );
              return;
            }
            for (const m of messages) this.options.onMessage(m);
          },
        });
        log.debug({ upstream: label }, 'upstream GET stream ended; opening it again');
      } catch (err) {
        if (this.#stopped) return;
        log.debug(
          { upstream: label, err: err instanceof Error ? err.message : String(err) },
          'upstream GET stream failed; opening it again',
        );
      }
      await this.#sleep(Math.max(retryMs ?? 0, this.#backoff.next()));
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = () => {
        this.#wake = undefined;
        done();
      };
    });
  }
}
