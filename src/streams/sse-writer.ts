import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import { LARGE_TEXT_CHARS, TurnQueue } from '../timing/loop-turns.js';

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Proxies such as nginx buffer responses by default; an SSE stream must not be.
  'x-accel-buffering': 'no',
};

/**
 * How much a stream may leave unsent (limits.maxStreamBufferedBytes) before its reader is cut
 * off, and who hears of it (the transport counts it, and releases what the stream carried).
 */
export interface StreamBound {
  readonly maxBufferedBytes: number;
  cutOff(): void;
}

/**
 * Runs `listener` once `raw` closes, or at once if it closed already: a client may go away while
 * a request awaits something (the session store), and a `close` event that fired then never
 * fires again.
 */
export function onceClosed(raw: ServerResponse, listener: () => void): void {
  if (raw.destroyed) listener();
  else raw.once('close', listener);
}

/**
 * Writes JSON-RPC messages as Server-Sent Events on a raw Node response. Node buffers whatever
 * the socket cannot take; a reader that leaves more than the bound unsent is cut off (the socket
 * destroyed) before anything more is written, so a client that stops reading holds at most the
 * bound and one message.
 */
export class SseWriter {
  #closed = false;
  readonly #closeListeners: Array<() => void> = [];
  /** What is sent while a large event is written a slice per turn (timing/loop-turns.ts); a pending end after it. */
  readonly #queue = new TurnQueue(
    (chunk) => this.#write(chunk),
    () => this.#endIfAsked(),
  );
  /** end() was called while a large event was still being written. */
  #ending = false;

  constructor(
    private readonly raw: ServerResponse,
    private readonly bound: StreamBound,
  ) {
    onceClosed(raw, () => this.#markClosed());
  }

  get closed(): boolean {
    return this.#closed || this.raw.destroyed;
  }

  open(headers: OutgoingHttpHeaders): void {
    if (this.closed) return;
    this.raw.writeHead(200, { ...headers, ...SSE_HEADERS });
    this.raw.flushHeaders();
  }

  send(message: JsonRpcMessage, id?: string): boolean {
    const data = `event: message\ndata: ${JSON.stringify(message)}\n\n`;
    return this.#write(id === undefined ? data : `id: ${id}\n${data}`);
  }

  /** An event of another type than `message` (the legacy transport's `endpoint`). */
  event(type: string, data: string): boolean {
    return this.#write(`event: ${type}\ndata: ${data}\n\n`);
  }

  /**
   * The 2025-11-25 priming event: an id and empty data, so the client can resume from here even
   * if nothing else arrives; `retry` tells it how long to wait before it reconnects.
   */
  prime(id: string, retryMs: number): boolean {
    return this.#write(`id: ${id}\nretry: ${retryMs}\ndata: \n\n`);
  }

  /** A comment line: keeps idle connections (and the proxies between) from timing out. */
  comment(text: string): void {
    this.#write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.#queue.busy && !this.closed) {
      this.#ending = true;
      return;
    }
    if (!this.closed) this.raw.end();
    this.#markClosed();
  }

  onClose(listener: () => void): void {
    if (this.closed) {
      this.#markClosed();
      listener();
    } else this.#closeListeners.push(listener);
  }

  #write(chunk: string): boolean {
    if (this.closed) return false;
    if (this.#queue.holds(chunk)) return true;
    if (this.raw.writableLength > this.bound.maxBufferedBytes) {
      // Unsent bytes are lost with the socket: the client resumes (or reconnects) from what it read.
      this.raw.destroy();
      this.#markClosed();
      this.bound.cutOff();
      return false;
    }
    if (chunk.length <= LARGE_TEXT_CHARS) {
      this.raw.write(chunk);
      return true;
    }
    // A large event goes out a slice per turn, so other clients' requests are not held behind it.
    const raw = this.raw;
    const write = (slice: string) => void raw.write(slice);
    this.#queue.writeLarge(chunk, { write, last: write, stopped: () => this.closed });
    return true;
  }

  #endIfAsked(): void {
    if (!this.#ending) return;
    this.#ending = false;
    this.end();
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const l of this.#closeListeners.splice(0)) l();
  }
}
