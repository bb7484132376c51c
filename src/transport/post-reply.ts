import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { MessageSink } from '../contracts/request-context.js';
import type {
  Classified,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcResponse,
} from '../jsonrpc/messages.js';
import { SseWriter, type StreamBound } from '../streams/sse-writer.js';
import { ERRORS, type ErrorEntry, type ErrorName } from '../jsonrpc/errors.js';
import { LARGE_TEXT_CHARS, writeAcrossTurns } from '../timing/loop-turns.js';

/** An SSE reply as its events are recorded and written (see RecordedStream). */
export interface ReplyStream {
  send(message: JsonRpcMessage, final?: boolean): void;
  end(): void;
}

/**
 * The reply to one POST that carried requests. Headers wait until the first message is known:
 * the answer first means a JSON reply (which never touches the event store); anything related
 * first (progress, logging) means an SSE stream that carries those messages and then the
 * answers, each event recorded so that the client can resume the stream if its connection drops.
 */
export class PostReply implements MessageSink {
  #remaining: number;
  #stream: ReplyStream | undefined;
  #collected: JsonRpcResponse[] = [];
  readonly #answered = new Set<JsonRpcId | null>();

  constructor(
    private readonly raw: ServerResponse,
    requests: number,
    private readonly batch: boolean,
    private readonly headers: OutgoingHttpHeaders,
    /** Turns the opened SSE writer into the stream events go through (recorded, with ids). */
    private readonly record: (writer: SseWriter) => ReplyStream,
    /** What an SSE reply may leave unsent (limits.maxStreamBufferedBytes). */
    private readonly bound: StreamBound,
  ) {
    this.#remaining = requests;
  }

  get finished(): boolean {
    return this.#remaining === 0;
  }

  /**
   * The notifications/cancelled the client would send for the requests among `messages` (this
   * POST's) still unanswered: what the gateway cancels when it cuts the reply stream off, so
   * their workers and in-flight places come back now, not when the calls would have ended.
   */
  cancellations(messages: readonly Classified[]): JsonRpcNotification[] {
    const reason = 'the client did not read its reply stream';
    const cancels: JsonRpcNotification[] = [];
    for (const c of messages) {
      if (c.kind !== 'request' || this.#answered.has(c.message.id)) continue;
      cancels.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: c.message.id, reason } });
    }
    return cancels;
  }

  send(message: JsonRpcMessage): boolean {
    if (this.#remaining === 0) return false; // nothing may follow the last response
    // Before the stream opened, a gone client has no event id to resume from: not delivered.
    // After, the event is recorded all the same (a dropped connection is not a cancellation).
    if (!this.#stream && this.raw.destroyed) return false;
    this.#open().send(message);
    return true;
  }

  /** `status` applies to a JSON reply (an SSE stream already said 200). */
  respond(response: JsonRpcResponse, status = 200): void {
    if (this.#remaining === 0) return;
    this.#remaining--;
    this.#answered.add(response.id);
    if (this.#stream) {
      this.#stream.send(response, this.#remaining === 0);
      if (this.#remaining === 0) this.#stream.end();
      return;
    }
    if (this.batch) {
      this.#collected.push(response);
      if (this.#remaining === 0) this.#json(JSON.stringify(this.#collected));
      return;
    }
    const alone = status === 200 ? aloneStatus(response) : undefined;
    if (alone !== undefined) {
      // A POST's only message refused by a rate limit, a quota or a full fairness queue: the HTTP reply says so
      // too, as CLIENT_TOO_MANY_* do.
      this.headers['retry-after'] = String(Math.max(1, Math.ceil(alone.waitMs / 1000)));
      status = alone.status;
    }
    this.#json(JSON.stringify(response), status);
  }

  #open(): ReplyStream {
    if (!this.#stream) {
      const sse = new SseWriter(this.raw, this.bound);
      sse.open(this.headers);
      this.#stream = this.record(sse);
      // Batch answers that were ready before the stream opened go first.
      for (const r of this.#collected.splice(0)) this.#stream.send(r);
    }
    return this.#stream;
  }

  #json(body: string, status = 200): void {
    if (this.raw.destroyed) return;
    // The hook headers are this reply's own copy (reply.getHeaders()), and a JSON reply is their last use: no second
    // copy.
    const headers = this.headers;
    headers['content-type'] = 'application/json';
    if (body.length <= LARGE_TEXT_CHARS) {
      // Nearly every reply: one write, without the slicing's sink and closures.
      headers['content-length'] = Buffer.byteLength(body);
      this.raw.writeHead(status, headers);
      this.raw.end(body);
      return;
    }
    // A large answer goes out chunked, a slice per turn, so the requests of other clients are not held behind it. No
    // content-length: its UTF-8 length is a pass over the whole text in one turn (2.4 ms for 3.5 MB).
    this.raw.writeHead(status, headers);
    const raw = this.raw;
    writeAcrossTurns(body, {
      write: (slice) => raw.write(slice),
      last: (slice) => raw.end(slice),
      stopped: () => raw.destroyed,
    });
  }
}

/**
 * The HTTP status and wait of an in-band error whose entry (named by data.type, with its code) has
 * statusWhenAlone: RATE_LIMITED, QUOTA_EXCEEDED, FAIRNESS_QUEUE_FULL. Undefined for any other reply.
 */
function aloneStatus(response: JsonRpcResponse): { status: number; waitMs: number } | undefined {
  if (!('error' in response)) return undefined;
  const data = response.error.data as { type?: unknown; retryAfterMs?: unknown } | undefined;
  const type = data?.type;
  if (typeof type !== 'string' || !Object.hasOwn(ERRORS, type)) return undefined;
  const entry: ErrorEntry = ERRORS[type as ErrorName];
  if (entry.statusWhenAlone !== true || entry.code !== response.error.code) return undefined;
  return { status: entry.httpStatus, waitMs: typeof data?.retryAfterMs === 'number' ? data.retryAfterMs : 1000 };
}
