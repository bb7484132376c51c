import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import {
  comparePositions,
  type AppendOptions,
  type EventStore,
  type EventStoreLimits,
  type Replay,
  type StoredEvent,
} from './event-store.js';

interface Stream {
  events: StoredEvent[];
  lastMs: number;
  lastSeq: number;
  /** When the stream was last written or touched. */
  usedAt: number;
}

/**
 * Events in this process: the single-replica default. Bounded per stream (length and age) and in
 * the number of streams (least recently used dropped first), so a busy gateway cannot grow it
 * without limit. Positions look like Redis stream ids (`<ms>-<n>`), so both stores behave alike.
 */
export class MemoryEventStore implements EventStore {
  readonly #streams = new Map<string, Stream>();
  /** The stream keys of each session, so an ended session's streams go at once. */
  readonly #bySession = new Map<string, Set<string>>();
  readonly #limits: EventStoreLimits;
  readonly #maxStreams: number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(limits: EventStoreLimits & { maxStreams?: number }) {
    this.#limits = limits;
    this.#maxStreams = limits.maxStreams ?? 10_000;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(30_000, Math.max(1000, limits.maxAgeMs / 4)));
    this.#sweeper.unref();
  }

  async append(
    sessionId: string,
    streamId: string,
    message: JsonRpcMessage | undefined,
    options: AppendOptions = {},
  ): Promise<StoredEvent | undefined> {
    const key = keyOf(sessionId, streamId);
    const now = Date.now();
    let stream = this.#live(key, now);
    if (!stream) {
      if (options.onlyIfExists) return undefined;
      stream = { events: [], lastMs: 0, lastSeq: 0, usedAt: now };
    }
    // Like Redis: the time part never goes back, the counter breaks ties within a millisecond.
    if (now > stream.lastMs) {
      stream.lastMs = now;
      stream.lastSeq = 0;
    } else {
      stream.lastSeq++;
    }
    const event: StoredEvent = {
      position: `${stream.lastMs}-${stream.lastSeq}`,
      previous: stream.events.at(-1)?.position ?? '',
      // A copy: the caller's object may change after it was recorded.
      message: message === undefined ? undefined : (structuredClone(message) as JsonRpcMessage),
      final: options.final ?? false,
    };
    stream.events.push(event);
    if (stream.events.length > this.#limits.maxEvents)
      stream.events.splice(0, stream.events.length - this.#limits.maxEvents);
    this.#trimAge(stream, now);
    this.#use(key, stream, now);
    return event;
  }

  async replay(sessionId: string, streamId: string, position: string): Promise<Replay | undefined> {
    const stream = this.#live(keyOf(sessionId, streamId), Date.now());
    if (!stream) return undefined;
    this.#trimAge(stream, Date.now());
    const i = stream.events.findIndex((e) => e.position === position);
    if (i === -1) return undefined;
    return { anchor: stream.events[i]!, events: stream.events.slice(i + 1) };
  }

  async touch(sessionId: string, streamId: string): Promise<void> {
    const key = keyOf(sessionId, streamId);
    const now = Date.now();
    const stream = this.#live(key, now);
    if (stream) this.#use(key, stream, now);
  }

  async forgetSession(sessionId: string): Promise<void> {
    for (const key of this.#bySession.get(sessionId) ?? []) this.#streams.delete(key);
    this.#bySession.delete(sessionId);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#streams.clear();
    this.#bySession.clear();
  }

  #live(key: string, now: number): Stream | undefined {
    const stream = this.#streams.get(key);
    if (stream && now - stream.usedAt > this.#limits.maxAgeMs) {
      this.#drop(key);
      return undefined;
    }
    return stream;
  }

  /** Re-inserts the stream last: the map stays in least-recently-used order. */
  #use(key: string, stream: Stream, now: number): void {
    stream.usedAt = now;
    this.#streams.delete(key);
    this.#streams.set(key, stream);
    const sessionId = sessionOf(key);
    let keys = this.#bySession.get(sessionId);
    if (!keys) this.#bySession.set(sessionId, (keys = new Set()));
    keys.add(key);
    while (this.#streams.size > this.#maxStreams) {
      const oldest = this.#streams.keys().next();
      if (oldest.done) break;
      this.#drop(oldest.value);
    }
  }

  #drop(key: string): void {
    this.#streams.delete(key);
    const sessionId = sessionOf(key);
    const keys = this.#bySession.get(sessionId);
    keys?.delete(key);
    if (keys?.size === 0) this.#bySession.delete(sessionId);
  }

  /** Drops events older than maxAge, but never the newest (it anchors the stream's next event). */
  #trimAge(stream: Stream, now: number): void {
    const cutoff = `${now - this.#limits.maxAgeMs}-0`;
    let drop = 0;
    while (drop < stream.events.length - 1 && comparePositions(stream.events[drop]!.position, cutoff) < 0) drop++;
    if (drop > 0) stream.events.splice(0, drop);
  }

  #sweep(): void {
    const now = Date.now();
    // Oldest first: stop at the first stream still in use.
    for (const [key, stream] of this.#streams) {
      if (now - stream.usedAt <= this.#limits.maxAgeMs) break;
      this.#drop(key);
    }
  }
}

function keyOf(sessionId: string, streamId: string): string {
  return `${sessionId}\u0000${streamId}`;
}

function sessionOf(key: string): string {
  return key.slice(0, key.indexOf('\u0000'));
}
