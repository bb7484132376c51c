import type { FastifyReply } from 'fastify';
import type { JsonRpcId } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import { SseWriter, type StreamBound } from '../streams/sse-writer.js';
import { Rejection } from './error-reply.js';
import { hookHeaders } from './http-headers.js';

export type StreamKind = 'get' | 'resumed' | 'listen' | 'legacy-sse';

/**
 * The long-lived SSE streams (GET, resumed, listen) this replica holds: at most `max` at once,
 * each published as it opens and closes (stream:open, stream:close: the open-streams gauge). POST
 * replies are not counted here: they end with their last response. Every stream, POST replies
 * included, may leave at most `maxBufferedBytes` unsent (`bound`).
 */
export class StreamRoom {
  #open = 0;

  constructor(
    /** A reload may change it: streams open past a lowered bound stay, new ones wait for room. */
    public max: number,
    private readonly diagnostics: DataPathEvents,
    /** limits.maxStreamBufferedBytes. */
    readonly maxBufferedBytes: number,
  ) {}

  /** Throws STREAM_LIMIT while this replica holds `max` streams; before any reply is written. */
  check(id: JsonRpcId | null = null): void {
    if (this.#open >= this.max) {
      throw new Rejection(
        'STREAM_LIMIT',
        `This replica holds its maximum of ${this.max} open streams (limits.maxStreams): retry later`,
        id,
        { retryAfterMs: 5000 },
      );
    }
  }

  /**
   * The unsent-bytes bound of a stream of `kind` (`reply`: a POST's SSE reply): a reader cut
   * off past it is counted (stream:cut-off), then `release` gives back what the stream carried.
   */
  bound(kind: StreamKind | 'reply', release?: () => void): StreamBound {
    return {
      maxBufferedBytes: this.maxBufferedBytes,
      cutOff: () => {
        this.diagnostics.emit('stream:cut-off', { kind });
        release?.();
      },
    };
  }

  /**
   * Takes the reply over as an SSE stream of `kind`. A client already gone (it went away while
   * the request awaited the store) gets a writer closed from the start: its slot is given back
   * at once, and whatever waits on the writer's close runs.
   */
  open(reply: FastifyReply, kind: StreamKind): SseWriter {
    reply.hijack();
    const sse = new SseWriter(reply.raw, this.bound(kind));
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
