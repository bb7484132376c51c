import { GatewayError } from '../../jsonrpc/errors.js';
import type { McpResult, UpstreamCall, UpstreamPeer } from '../../contracts/upstream.js';

interface OpenAsk {
  controller: AbortController;
  reject: (error: Error) => void;
  /**
   * The worker's calls in flight when it was asked: it is for one of them (a stdio upstream
   * does not say which), and nobody needs its answer once they have all ended. Empty: asked
   * while no call ran, it is for none.
   */
  calls: Set<UpstreamCall>;
}

/**
 * The requests one worker's upstream made of its client (sampling, elicitation, roots) that the
 * client has not answered yet. A request is withdrawn when the calls it can be for have ended
 * (a result, a timeout, a cancellation): the client is told (notifications/cancelled) and the
 * upstream gets an error, so a client that never answers holds the worker no longer than its
 * call. When the worker goes, each ends at once with the worker's reason, both here and where
 * it waits for the client (the signal).
 */
export class WorkerAsks {
  readonly #open = new Set<OpenAsk>();
  /** The worker's calls in flight, as the client sent them (see `during`). */
  readonly #calls = new Set<UpstreamCall>();

  /** `tally.open` counts the open requests of every worker sharing it (a pool's status). */
  constructor(private readonly tally: { open: number }) {}

  get size(): number {
    return this.#open.size;
  }

  /** The worker's calls in flight, as `during` learned them. */
  calls(): UpstreamCall[] {
    return [...this.#calls];
  }

  /** `call` went to the upstream: what the upstream asks until it ends may be for it. */
  during(call: UpstreamCall): void {
    this.#calls.add(call);
    const ended = () => this.#ended(call);
    call.promise.then(ended, ended);
  }

  /** `peer`, with every request it carries counted here until it settles, is withdrawn, or `failAll` ends it. */
  track(peer: UpstreamPeer): UpstreamPeer {
    return {
      request: (method, params, cancelled) =>
        new Promise<McpResult>((resolve, reject) => {
          const ask: OpenAsk = { controller: new AbortController(), reject, calls: new Set(this.#calls) };
          this.#add(ask);
          // The upstream cancelled it: the client need not answer, and the worker waits no more.
          const onCancel = () =>
            this.#end(
              ask,
              cancelled?.reason instanceof Error ? cancelled.reason : new Error('cancelled by the upstream'),
            );
          cancelled?.addEventListener('abort', onCancel, { once: true });
          const done = () => {
            cancelled?.removeEventListener('abort', onCancel);
            this.#delete(ask);
          };
          if (cancelled?.aborted) onCancel();
          peer.request(method, params, ask.controller.signal).then(
            (result) => {
              done();
              resolve(result);
            },
            (err: unknown) => {
              done();
              reject(err instanceof Error ? err : new Error(String(err)));
            },
          );
        }),
      notification: (n) => peer.notification(n),
    };
  }

  failAll(error: Error): void {
    for (const ask of [...this.#open]) this.#end(ask, error);
  }

  #ended(call: UpstreamCall): void {
    this.#calls.delete(call);
    for (const ask of [...this.#open]) {
      if (ask.calls.delete(call) && ask.calls.size === 0) {
        this.#end(ask, new GatewayError('REQUEST_CANCELLED', 'The call this request was made for has ended'));
      }
    }
  }

  #end(ask: OpenAsk, error: Error): void {
    this.#delete(ask);
    ask.controller.abort(error);
    ask.reject(error);
  }

  #add(ask: OpenAsk): void {
    this.#open.add(ask);
    this.tally.open++;
  }

  #delete(ask: OpenAsk): void {
    if (this.#open.delete(ask)) this.tally.open--;
  }
}
