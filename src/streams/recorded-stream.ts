import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import { streamChannel } from '../cluster/bus-messages.js';
import type { StoredEvent } from './event-store.js';
import { formatEventId } from './event-id.js';
import type { SseWriter } from './sse-writer.js';
import type { StreamServices } from './stream-services.js';

/**
 * A POST's SSE reply as this replica produces it: each event is appended to the event store,
 * then written under its id, then published for a replica that serves a resumed GET of this
 * stream. Appends are asynchronous, so they are chained: the stream keeps its order. Events are
 * recorded even after the client's socket is gone (a dropped connection is not a cancellation):
 * the rest of the call, final response included, stays replayable.
 *
 * A failed append degrades the stream for good: later events are written without ids (the
 * client cannot resume them, but it gets them while it is connected).
 */
export class RecordedStream {
  #chain: Promise<void> = Promise.resolve();
  #degraded = false;
  readonly #channel: string;

  constructor(
    private readonly services: StreamServices,
    private readonly sessionId: string,
    private readonly streamId: string,
    private readonly writer: SseWriter,
  ) {
    this.#channel = streamChannel(sessionId, streamId);
  }

  /** 2025-11-25: an id to resume from before anything else is sent. */
  prime(): void {
    this.#enqueue(undefined, false);
  }

  send(message: JsonRpcMessage, final = false): void {
    this.#enqueue(message, final);
  }

  /** Ends the reply once everything sent before has been recorded and written. */
  end(): void {
    this.#chain = this.#chain.then(() => this.writer.end());
  }

  #enqueue(message: JsonRpcMessage | undefined, final: boolean): void {
    this.#chain = this.#chain.then(() => this.#record(message, final));
  }

  async #record(message: JsonRpcMessage | undefined, final: boolean): Promise<void> {
    const { services } = this;
    let event: StoredEvent | undefined;
    if (!this.#degraded && services.storeAvailable) {
      try {
        event = await services.events.append(this.sessionId, this.streamId, message, { final });
      } catch (err) {
        services.failed('event_store', 'append', err);
      }
    }
    if (!event) {
      this.#degraded = true;
      if (message !== undefined) this.writer.send(message); // a priming event needs an id: none is sent
      return;
    }
    const id = formatEventId(this.streamId, event.position);
    if (message === undefined) this.writer.prime(id, services.retryMs);
    else this.writer.send(message, id);
    services.publish(this.#channel, { type: 'event', event });
  }
}
