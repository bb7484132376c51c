import type { FastifyReply } from 'fastify';
import type { JsonRpcId } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import { SseWriter } from '../streams/sse-writer.js';
import { Rejection } from './error-reply.js';
import { hookHeaders } from './http-headers.js';

export type StreamKind = 'get' | 'resumed' | 'listen' | 'legacy-sse';

/**
 * The long-lived SSE streams (GET, resumed, listen) this replica holds: at most `max` at once,
 * each published as it opens and closes (stream:open, stream:close: the open-streams gauge). POST
 * replies are not counted here: they end with their last response.
 */
export class StreamRoom {
  #open = 0;

  constructor(
    /** A reload may change it: streams open past a lowered bound stay, new ones wait for room. */
    public max: number,
    private readonly diagnostics: DataPathEvents,
  ) {}

  /** Throws STREAM_LIMIT while this replica holds `max` streams; before any reply is written. */
  check(id: JsonRpcId | null = null): void {
    if (this.#open >= this.max) {
      throw new Rejection('STREAM_LIMIT', `This replica holds its maximum of ${this.max} open streams (limits.maxStreams): retry later`, id, { retryAfterMs: 5000 });
    }
  }

  /** Takes the reply over as an SSE stream of `kind`. */
  open(reply: FastifyReply, kind: StreamKind): SseWriter {
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    sse.open(hookHeaders(reply));
    this.#open++;
    this.diagnostics.emit('stream:open', { kind });
    sse.onClose(() => {
      this.#open--;
      this.diagnostics.emit('stream:close', { kind });
    });
    return sse;
  }
}
