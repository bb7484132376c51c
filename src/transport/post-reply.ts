import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { MessageSink } from '../gateway/context.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../jsonrpc/messages.js';
import { SseWriter } from './sse-writer.js';

/**
 * The reply to one POST that carried requests. Headers wait until the first message is known:
 * the answer first means a JSON reply; anything related first (progress, logging) means an SSE
 * stream that carries those messages and then the answers.
 */
export class PostReply implements MessageSink {
  #remaining: number;
  #sse: SseWriter | undefined;
  #collected: JsonRpcResponse[] = [];

  constructor(
    private readonly raw: ServerResponse,
    requests: number,
    private readonly batch: boolean,
    private readonly headers: OutgoingHttpHeaders,
  ) {
    this.#remaining = requests;
  }

  get finished(): boolean {
    return this.#remaining === 0;
  }

  send(message: JsonRpcMessage): boolean {
    if (this.#remaining === 0 || this.raw.destroyed) return false; // nothing may follow the last response
    return this.#stream().send(message);
  }

  respond(response: JsonRpcResponse): void {
    if (this.#remaining === 0) return;
    this.#remaining--;
    if (this.#sse) {
      this.#sse.send(response);
      if (this.#remaining === 0) this.#sse.end();
      return;
    }
    if (this.batch) {
      this.#collected.push(response);
      if (this.#remaining === 0) this.#json(JSON.stringify(this.#collected));
      return;
    }
    this.#json(JSON.stringify(response));
  }

  #stream(): SseWriter {
    if (!this.#sse) {
      this.#sse = new SseWriter(this.raw);
      this.#sse.open(this.headers);
      // Batch answers that were ready before the stream opened go first.
      for (const r of this.#collected.splice(0)) this.#sse.send(r);
    }
    return this.#sse;
  }

  #json(body: string): void {
    if (this.raw.destroyed) return;
    this.raw.writeHead(200, { ...this.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    this.raw.end(body);
  }
}
