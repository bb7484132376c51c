import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import { SETTLED } from './internals.js';
import { comparePositions, type StoredEvent } from './event-store.js';
import { formatEventId } from './event-id.js';
import type { SseWriter } from './sse-writer.js';
import type { StreamServices } from './stream-services.js';

/**
 * Writes one recorded stream to one SSE reply on this replica: each event exactly once and in
 * stream order, wherever it comes from — a replay, the bus, or this replica's own appends.
 *
 * Events that arrive before `start` (the reader subscribed before it replayed, so nothing falls
 * between the two) wait in a buffer; `start` writes the replay, then the buffer, skipping what
 * the replay already covered. Each event names the one before it: an event whose predecessor is
 * not the last one written means some were missed (several replicas append to a GET stream, and
 * the bus may reorder or lose messages), so the follower reads them from the store instead.
 */
export class StreamFollower {
  /** Position of the last event written (or skipped as a marker); '' before the first. */
  #last: string;
  /** false until some position is known: the first event is then taken as it is. */
  #anchored: boolean;
  #chain: Promise<void> = Promise.resolve();
  #buffer: Array<{ event?: StoredEvent; unrecorded?: JsonRpcMessage }> | undefined = [];
  #ended = false;

  constructor(
    private readonly services: StreamServices,
    private readonly sessionId: string,
    readonly streamId: string,
    private readonly writer: SseWriter,
    last: string | undefined,
    private readonly policy: {
      /** Called once, after the stream's final event was written (a POST reply's last response). */
      onFinal?: () => void;
      /**
       * When the store lost this reader's position (expired, or Redis restarted empty): true goes
       * on from the next event (a session's GET stream: better a gap than no stream), false ends
       * the reply (a resumed POST reply: the client learns it cannot resume).
       */
      continueOnLoss?: boolean;
    } = {},
  ) {
    this.#last = last ?? '';
    this.#anchored = last !== undefined;
  }

  get ended(): boolean {
    return this.#ended || this.writer.closed;
  }

  /** Writes the replayed events, then what arrived meanwhile; from then on, events as they come. */
  start(replayed: readonly StoredEvent[] = []): void {
    this.#then(async () => {
      for (const event of replayed) this.#write(event);
      const buffered = this.#buffer ?? [];
      this.#buffer = undefined;
      for (const b of buffered) {
        if (b.event) await this.#take(b.event);
        else if (b.unrecorded) this.#writeUnrecorded(b.unrecorded);
      }
    });
  }

  /** Where a fresh reader starts (its opening marker): earlier events were not for it. Before `start` only. */
  anchor(position: string): void {
    this.#last = position;
    this.#anchored = true;
  }

  offer(event: StoredEvent): void {
    if (this.#buffer) this.#buffer.push({ event });
    else this.#then(() => this.#take(event));
  }

  /** A message whose append failed: written without an id, in its turn. */
  offerUnrecorded(message: JsonRpcMessage): void {
    if (this.#buffer) this.#buffer.push({ unrecorded: message });
    else this.#then(async () => this.#writeUnrecorded(message));
  }

  /** Reads from the store whatever came after the last event written (a lost bus message, a dead bus). */
  catchUp(): void {
    if (this.#buffer) return; // start() has not run yet: it writes the replay itself
    this.#then(async () => void (await this.#catchUp()));
  }

  /** For tests only (see internals.ts). */
  [SETTLED](): Promise<void> {
    return this.#chain;
  }

  #then(step: () => Promise<void>): void {
    this.#chain = this.#chain.then(step).catch((err: unknown) => this.services.failed('event_store', 'replay', err));
  }

  async #take(event: StoredEvent): Promise<void> {
    if (this.ended) return;
    if (this.#anchored && comparePositions(event.position, this.#last) <= 0) return; // written already
    if (this.#anchored && event.previous !== this.#last) {
      // Missed some: the store has them, this one included.
      if ((await this.#catchUp()) || !this.policy.continueOnLoss) return;
    }
    this.#write(event);
  }

  /** false when the store no longer has the last position written. */
  async #catchUp(): Promise<boolean> {
    if (this.ended || !this.#anchored) return true;
    const replay = await this.services.events.replay(this.sessionId, this.streamId, this.#last);
    if (!replay) {
      // Going on would skip events without saying so, unless the policy prefers that.
      if (!this.policy.continueOnLoss) this.#end();
      return false;
    }
    for (const event of replay.events) this.#write(event);
    return true;
  }

  #write(event: StoredEvent): void {
    if (this.ended) return;
    this.#last = event.position;
    this.#anchored = true;
    if (event.message !== undefined) this.writer.send(event.message, formatEventId(this.streamId, event.position));
    if (event.final) {
      this.#ended = true;
      this.policy.onFinal?.();
    }
  }

  #writeUnrecorded(message: JsonRpcMessage): void {
    if (!this.ended) this.writer.send(message);
  }

  #end(): void {
    this.#ended = true;
    this.writer.end();
  }
}
