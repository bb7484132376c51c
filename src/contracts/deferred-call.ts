import type { CallOptions, McpResult, UpstreamCall } from './upstream.js';

/**
 * A call that cannot be sent yet (no free worker, or its worker is still starting). It becomes
 * a real upstream call once `dispatch` is given one; until then, cancel and timeouts fail it
 * without the upstream ever seeing it.
 */
export class DeferredCall implements UpstreamCall {
  readonly promise: Promise<McpResult>;
  #resolve!: (r: McpResult) => void;
  #reject!: (e: Error) => void;
  #inner: UpstreamCall | undefined;
  #settled = false;
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly method: string,
    readonly params: Record<string, unknown> | undefined,
    readonly options: CallOptions | undefined,
    /** Called when the call is cancelled while still waiting (to take it out of a queue). */
    private readonly onAbandon: (call: DeferredCall) => void,
  ) {
    this.promise = new Promise<McpResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get waiting(): boolean {
    return !this.#settled && this.#inner === undefined;
  }

  dispatch(inner: UpstreamCall): void {
    clearTimeout(this.timer);
    this.#inner = inner;
    inner.promise.then(this.#resolve, this.#reject);
  }

  fail(error: Error): void {
    if (!this.waiting) return;
    clearTimeout(this.timer);
    this.#settled = true;
    this.#reject(error);
  }

  cancel(error: Error): void {
    if (this.#inner) {
      this.#inner.cancel(error);
      return;
    }
    this.onAbandon(this);
    this.fail(error);
  }
}

/** A call that failed before reaching any upstream (closed pool, full queue). */
export function failedCall(error: Error): UpstreamCall {
  return { promise: Promise.reject(error), cancel: () => undefined };
}
