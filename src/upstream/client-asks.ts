import type { McpResult, UpstreamPeer } from '../contracts/upstream.js';

interface OpenAsk {
  controller: AbortController;
  reject: (error: Error) => void;
}

/**
 * The requests one worker's upstream made of its client (sampling, elicitation, roots) that the
 * client has not answered yet. While one is open the worker is busy, whatever its calls say:
 * the upstream is waiting for that answer to finish a call. When the worker goes, each ends at
 * once with the worker's reason, both here and where it waits for the client (the signal).
 */
export class ClientAsks {
  readonly #open = new Set<OpenAsk>();

  /** `tally.open` counts the open requests of every worker sharing it (a pool's status). */
  constructor(private readonly tally: { open: number }) {}

  get size(): number {
    return this.#open.size;
  }

  /** `peer`, with every request it carries counted here until it settles or `failAll` ends it. */
  track(peer: UpstreamPeer): UpstreamPeer {
    return {
      request: (method, params, cancelled) =>
        new Promise<McpResult>((resolve, reject) => {
          const ask: OpenAsk = { controller: new AbortController(), reject };
          this.#add(ask);
          // The upstream cancelled it: the client need not answer, and the worker waits no more.
          const onCancel = () => this.#end(ask, cancelled?.reason instanceof Error ? cancelled.reason : new Error('cancelled by the upstream'));
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
