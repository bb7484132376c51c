import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Proxies such as nginx buffer responses by default; an SSE stream must not be.
  'x-accel-buffering': 'no',
};

/** Writes JSON-RPC messages as Server-Sent Events on a raw Node response. */
export class SseWriter {
  #closed = false;
  readonly #closeListeners: Array<() => void> = [];

  constructor(private readonly raw: ServerResponse) {
    raw.on('close', () => this.#markClosed());
  }

  get closed(): boolean {
    return this.#closed || this.raw.destroyed;
  }

  open(headers: OutgoingHttpHeaders): void {
    this.raw.writeHead(200, { ...headers, ...SSE_HEADERS });
    this.raw.flushHeaders();
  }

  send(message: JsonRpcMessage, id?: string): boolean {
    if (this.closed) return false;
    this.raw.write(id === undefined ? `event: message\ndata: ${JSON.stringify(message)}\n\n` : `id: ${id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`);
    return true;
  }

  /** An event of another type than `message` (the legacy transport's `endpoint`). */
  event(type: string, data: string): boolean {
    if (this.closed) return false;
    this.raw.write(`event: ${type}\ndata: ${data}\n\n`);
    return true;
  }

  /**
   * The 2025-11-25 priming event: an id and empty data, so the client can resume from here even
   * if nothing else arrives; `retry` tells it how long to wait before it reconnects.
   */
  prime(id: string, retryMs: number): boolean {
    if (this.closed) return false;
    this.raw.write(`id: ${id}\nretry: ${retryMs}\ndata: \n\n`);
    return true;
  }

  /** A comment line: keeps idle connections (and the proxies between) from timing out. */
  comment(text: string): void {
    if (!this.closed) this.raw.write(`: ${text}\n\n`);
  }

  end(): void {
    if (!this.closed) this.raw.end();
    this.#markClosed();
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#closeListeners.push(listener);
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const l of this.#closeListeners.splice(0)) l();
  }
}
