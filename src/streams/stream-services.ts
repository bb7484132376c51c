import type { Logger } from '../observability/logger.js';
import type { DataPathEvents } from '../observability/events.js';
import type { Bus } from '../cluster/bus.js';
import { decodeStreamMessage, encodeStreamMessage, type StreamMessage } from '../cluster/bus-messages.js';
import type { EventStore, StoredEvent } from './event-store.js';

/** What travels on a stream's bus channel (cluster/bus-messages.ts): events as this event store records them. */
export type StreamWire = StreamMessage<StoredEvent>;

export interface StreamServicesOptions {
  events: EventStore;
  bus: Bus;
  /** The SSE `retry` sent with priming events (2025-11-25). */
  retryMs: number;
  /** How long an event store stays bypassed after it failed (a hung Redis must not slow every event). */
  bypassMs?: number;
  /** How long a bus subscription may take before the reader goes on without it. */
  subscribeTimeoutMs?: number;
  /** Where failures and resumptions are published (metrics subscribe). */
  diagnostics: DataPathEvents;
  log: Logger;
}

const LOG_EVERY_MS = 10_000;

/**
 * The event store and bus as the transport's streams use them: failures are published, logged at
 * most every 10 s per kind, and never thrown at a request; after a store failure the store is
 * bypassed for a moment so that a hung Redis costs one timeout, not one per event.
 */
export class StreamServices {
  readonly events: EventStore;
  readonly bus: Bus;
  readonly retryMs: number;
  readonly #bypassMs: number;
  readonly #subscribeTimeoutMs: number;
  readonly #diagnostics: DataPathEvents;
  readonly #log: Logger;
  readonly #loggedAt = new Map<string, number>();
  #bypassUntil = 0;

  constructor(options: StreamServicesOptions) {
    this.events = options.events;
    this.bus = options.bus;
    this.retryMs = options.retryMs;
    this.#bypassMs = options.bypassMs ?? 2000;
    this.#subscribeTimeoutMs = options.subscribeTimeoutMs ?? 2000;
    this.#diagnostics = options.diagnostics;
    this.#log = options.log;
  }

  /** false for a moment after the store failed: events then go out without ids. */
  get storeAvailable(): boolean {
    return Date.now() >= this.#bypassUntil;
  }

  failed(component: 'event_store' | 'bus', operation: string, err: unknown): void {
    this.#diagnostics.emit('stream:failure', { component, operation });
    if (component === 'event_store') this.#bypassUntil = Date.now() + this.#bypassMs;
    const kind = `${component}:${operation}`;
    const now = Date.now();
    if (now - (this.#loggedAt.get(kind) ?? 0) < LOG_EVERY_MS) return;
    this.#loggedAt.set(kind, now);
    this.#log.warn(
      { component, operation, err: err instanceof Error ? err.message : String(err) },
      'SSE stream degraded: events go out without resumability or stay on this replica',
    );
  }

  resumed(outcome: 'resumed' | 'unknown' | 'failed'): void {
    this.#diagnostics.emit('stream:resumption', { outcome });
  }

  /** Fire and forget; calls made in order go out in order (one publisher connection). */
  publish(channel: string, wire: StreamWire): void {
    let text: string;
    try {
      text = encodeStreamMessage(wire);
    } catch (err) {
      this.failed('bus', 'publish', err);
      return;
    }
    this.bus.publish(channel, text).catch((err: unknown) => this.failed('bus', 'publish', err));
  }

  /**
   * Subscribes within a bounded time; undefined when the bus failed or was too slow (the reader
   * then polls the event store instead). A subscription that completes too late is ended.
   */
  async subscribe(channel: string, handler: (wire: StreamWire) => void): Promise<(() => Promise<void>) | undefined> {
    const onMessage = (raw: string) => {
      const wire = decodeStreamMessage<StoredEvent>(raw);
      if (wire) handler(wire);
    };
    let timer: NodeJS.Timeout | undefined;
    const subscription = this.bus.subscribe(channel, onMessage);
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.#subscribeTimeoutMs);
    });
    try {
      const unsubscribe = await Promise.race([subscription, timeout]);
      if (unsubscribe) return unsubscribe;
      this.failed('bus', 'subscribe', new Error(`no subscription within ${this.#subscribeTimeoutMs} ms`));
      void subscription.then((u) => u()).catch(() => undefined);
      return undefined;
    } catch (err) {
      this.failed('bus', 'subscribe', err);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
