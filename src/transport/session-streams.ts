import type { MessageSink } from '../gateway/context.js';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import type { SseWriter } from './sse-writer.js';

/** The GET streams open on this replica, one per session, for server-initiated messages. */
export class SessionStreams {
  readonly #streams = new Map<string, SseWriter>();
  #keepAlive: NodeJS.Timeout | undefined;

  constructor(keepAliveMs: number) {
    this.#keepAlive = setInterval(() => {
      for (const s of this.#streams.values()) s.comment('keep-alive');
    }, keepAliveMs);
    this.#keepAlive.unref();
  }

  get size(): number {
    return this.#streams.size;
  }

  has(sessionId: string): boolean {
    return this.#streams.has(sessionId);
  }

  add(sessionId: string, stream: SseWriter): void {
    this.#streams.set(sessionId, stream);
    stream.onClose(() => {
      if (this.#streams.get(sessionId) === stream) this.#streams.delete(sessionId);
    });
  }

  /** false when the session has no stream here (the message is then not delivered). */
  send(sessionId: string, message: JsonRpcMessage): boolean {
    const s = this.#streams.get(sessionId);
    if (!s || s.closed) return false;
    s.send(message);
    return true;
  }

  /** One copy to every session's stream: for changes that concern every client (list_changed). */
  broadcast(message: JsonRpcMessage): void {
    for (const s of this.#streams.values()) s.send(message);
  }

  /** A sink onto the session's GET stream, whichever stream is open when a message is sent. */
  sinkFor(sessionId: string): MessageSink {
    return { send: (message) => this.send(sessionId, message) };
  }

  close(sessionId: string): void {
    this.#streams.get(sessionId)?.end();
  }

  closeAll(): void {
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    for (const s of [...this.#streams.values()]) s.end();
  }
}
