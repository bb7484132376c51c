import type { MessageSink } from '../contracts/request-context.js';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import { streamChannel } from '../cluster/bus-messages.js';
import type { StoredEvent } from './event-store.js';
import { GET_STREAM, formatEventId, newStreamId } from './event-id.js';
import { RecordedStream } from './recorded-stream.js';
import type { SseWriter } from './sse-writer.js';
import { StreamFollower } from './stream-follower.js';
import type { StreamServices, StreamWire } from './stream-services.js';

export interface SessionStreamsOptions {
  keepAliveMs: number;
  services: StreamServices;
  /**
   * Other replicas share the event store and bus (Redis): a session's GET stream may be held by
   * another replica, so a message for it is recorded and published rather than dropped.
   */
  distributed: boolean;
  /** How long a stream's record lives without writes (the event store's max age). */
  retainMs: number;
  /** How often a reader without a bus subscription polls the store. */
  pollMs?: number;
}

/** A session's GET stream, held by this replica. */
interface Holder {
  readonly writer: SseWriter;
  readonly follower: StreamFollower;
  /** Tells this holder from any other (on any replica) when one takes the stream over. */
  readonly token: string;
}

/** A GET with Last-Event-ID, subscribed and replayed, waiting for its reply to open. */
export interface Resumption {
  /** Writes the priming event (when asked), the replay, then live events, on `writer`. */
  start(writer: SseWriter, prime: boolean): void;
  /** The reply will not be written after all. */
  cancel(): void;
}

/**
 * The SSE streams of sessions as this replica serves them:
 * - each session's GET stream (server-initiated messages), recorded under the stream id `get`
 *   so a client can resume it; at most one holder per session, on any replica (a new one takes
 *   over, the old one ends);
 * - POST replies that turned into SSE streams (`record`), recorded under a random stream id;
 * - GETs with Last-Event-ID (`resume`): the missed events of one stream, then live ones.
 *
 * A message for a session's GET stream (`sinkFor`) is appended to the store first and then
 * written by whichever replica holds the stream: directly when it is this one, else through the
 * bus. Nothing is recorded for a session that has no GET stream record (never opened one, or it
 * expired): the store's `onlyIfExists`.
 */
export class SessionStreams {
  readonly #holders = new Map<string, Holder>();
  /** Readers of resumed POST replies (ticks and shutdown reach them here). */
  readonly #resumed = new Set<{ writer: SseWriter; follower: StreamFollower }>();
  /** Sessions whose GET stream this replica held until it dropped (resumable until the time given). */
  readonly #released = new Map<string, number>();
  /** This replica's appends to each session's GET record, in order. */
  readonly #appends = new Map<string, Promise<void>>();
  readonly #services: StreamServices;
  readonly #options: SessionStreamsOptions;
  readonly #timers: NodeJS.Timeout[] = [];
  #nextToken = 1;

  constructor(options: SessionStreamsOptions) {
    this.#options = options;
    this.#services = options.services;
    this.#every(options.keepAliveMs, () => this.#keepAlive());
    // Keep each held GET record alive, and catch up on bus messages that were lost.
    this.#every(Math.max(250, Math.floor(options.retainMs / 4)), () => this.#maintain());
  }

  get size(): number {
    return this.#holders.size;
  }

  has(sessionId: string): boolean {
    return this.#holders.has(sessionId);
  }

  /** A POST's reply turned into an SSE stream on `writer`: record it so it can be resumed. */
  record(sessionId: string, writer: SseWriter, prime: boolean): RecordedStream {
    const stream = new RecordedStream(this.#services, sessionId, newStreamId(), writer);
    if (prime) stream.prime();
    return stream;
  }

  /**
   * A GET without Last-Event-ID: `writer` is the session's stream from now on. It is registered
   * at once (a concurrent GET sees it), then subscribed, then marked in the record (the marker is
   * its priming id, and creates the record other replicas append to).
   */
  async open(sessionId: string, writer: SseWriter, prime: boolean): Promise<void> {
    const services = this.#services;
    const follower = new StreamFollower(services, sessionId, GET_STREAM, writer, undefined, { continueOnLoss: true });
    const holder = this.#install(sessionId, writer, follower);
    const subscribed = this.#follow(sessionId, GET_STREAM, writer, follower, holder);
    // In this replica's append order: a message sent here from now on lands after the marker.
    // The append waits for the subscription, so nothing recorded after the marker is missed.
    const marker = await new Promise<StoredEvent | undefined>((resolve) =>
      this.#enqueue(sessionId, async () => {
        let appended: StoredEvent | undefined;
        try {
          await subscribed;
          if (services.storeAvailable) appended = await services.events.append(sessionId, GET_STREAM, undefined);
        } catch (err) {
          services.failed('event_store', 'append', err);
        } finally {
          resolve(appended); // never left waiting: an unanchored stream still works, without a priming id
        }
      }),
    );
    if (marker) {
      follower.anchor(marker.position);
      if (prime) writer.prime(formatEventId(GET_STREAM, marker.position), services.retryMs);
    }
    services.publish(streamChannel(sessionId, GET_STREAM), { type: 'holder', holderToken: holder.token });
    follower.start();
  }

  /**
   * A GET with Last-Event-ID naming `position` in stream `streamId`. Subscribes first, then
   * replays, so no live event falls between the two. undefined when that event is not retained
   * (unknown, trimmed or expired); throws when the store fails.
   */
  async resume(sessionId: string, streamId: string, position: string): Promise<Resumption | undefined> {
    const services = this.#services;
    const channel = streamChannel(sessionId, streamId);
    const early: StreamWire[] = [];
    let deliver: (wire: StreamWire) => void = (wire) => void early.push(wire);
    const unsubscribe = await services.subscribe(channel, (wire) => deliver(wire));
    let replay;
    try {
      replay = await services.events.replay(sessionId, streamId, position);
    } catch (err) {
      void unsubscribe?.();
      services.failed('event_store', 'replay', err);
      services.resumed('failed');
      throw err;
    }
    if (!replay) {
      void unsubscribe?.();
      services.resumed('unknown');
      return undefined;
    }
    services.resumed('resumed');
    const { anchor, events } = replay;
    return {
      cancel: () => void unsubscribe?.(),
      start: (writer, prime) => {
        writer.onClose(() => void unsubscribe?.());
        if (prime) writer.prime(formatEventId(streamId, position), services.retryMs);
        if (streamId === GET_STREAM) {
          const follower = new StreamFollower(services, sessionId, streamId, writer, position, {
            continueOnLoss: true,
          });
          const holder = this.#install(sessionId, writer, follower);
          deliver = (wire) => this.#onWire(holder, follower, wire);
          if (!unsubscribe) this.#poll(writer, follower);
          services.publish(channel, { type: 'holder', holderToken: holder.token });
          for (const wire of early) deliver(wire);
          follower.start(events);
          return;
        }
        if (anchor.final) {
          writer.end(); // the client had the last event already
          return;
        }
        const follower = new StreamFollower(services, sessionId, streamId, writer, position, {
          onFinal: () => writer.end(),
        });
        const reader = { writer, follower };
        this.#resumed.add(reader);
        writer.onClose(() => this.#resumed.delete(reader));
        deliver = (wire) => this.#onWire(undefined, follower, wire);
        if (!unsubscribe) this.#poll(writer, follower);
        for (const wire of early) deliver(wire);
        follower.start(events);
      },
    };
  }

  /**
   * Sends on the session's GET stream, wherever it is held. true when the message was handed to
   * a stream: written here, or recorded for the holder on another replica (or for a client that
   * resumes). false when this replica knows there is no stream (single replica, none open).
   */
  send(sessionId: string, message: JsonRpcMessage): boolean {
    const holder = this.#holders.get(sessionId);
    if (holder) {
      this.#appendHeld(sessionId, message);
      return true;
    }
    if (!this.#options.distributed && !this.#wasHeld(sessionId)) return false;
    this.#appendUnheld(sessionId, message);
    return true;
  }

  /**
   * One copy to every session's stream held here, and into the record of every stream that was
   * held here until it dropped: a client away when the tool list changed learns of it when it
   * resumes, on whichever replica. For changes that concern every client (list_changed).
   */
  broadcast(message: JsonRpcMessage): void {
    for (const sessionId of this.#holders.keys()) this.#appendHeld(sessionId, message);
    for (const sessionId of [...this.#released.keys()])
      if (this.#wasHeld(sessionId)) this.#appendUnheld(sessionId, message);
  }

  /** A sink onto the session's GET stream, whichever replica holds it when a message is sent. */
  sinkFor(sessionId: string): MessageSink {
    return { send: (message) => this.send(sessionId, message) };
  }

  /** The session ended: its GET stream closes and its recorded events go. */
  endSession(sessionId: string): void {
    this.close(sessionId);
    this.#services.events
      .forgetSession(sessionId)
      .catch((err: unknown) => this.#services.failed('event_store', 'forget', err));
  }

  close(sessionId: string): void {
    this.#released.delete(sessionId);
    this.#holders.get(sessionId)?.writer.end();
  }

  closeAll(): void {
    for (const t of this.#timers.splice(0)) clearInterval(t);
    for (const h of [...this.#holders.values()]) h.writer.end();
    for (const r of [...this.#resumed]) r.writer.end();
    this.#released.clear();
  }

  /** Registers `writer` as the session's GET stream here; a holder it replaces ends. */
  #install(sessionId: string, writer: SseWriter, follower: StreamFollower): Holder {
    const holder: Holder = { writer, follower, token: `${this.#services.bus.replicaId}:${this.#nextToken++}` };
    const previous = this.#holders.get(sessionId);
    this.#holders.set(sessionId, holder);
    this.#released.delete(sessionId);
    previous?.writer.end();
    writer.onClose(() => {
      if (this.#holders.get(sessionId) !== holder) return;
      this.#holders.delete(sessionId);
      this.#released.set(sessionId, Date.now() + this.#options.retainMs);
    });
    return holder;
  }

  /** Subscribes a GET holder to its stream's channel (or polls, when the bus fails). */
  async #follow(
    sessionId: string,
    streamId: string,
    writer: SseWriter,
    follower: StreamFollower,
    holder: Holder,
  ): Promise<void> {
    const unsubscribe = await this.#services.subscribe(streamChannel(sessionId, streamId), (wire) =>
      this.#onWire(holder, follower, wire),
    );
    if (unsubscribe) writer.onClose(() => void unsubscribe());
    else this.#poll(writer, follower);
  }

  #onWire(holder: Holder | undefined, follower: StreamFollower, wire: StreamWire): void {
    if (wire.type === 'event') follower.offer(wire.event);
    else if (wire.type === 'unrecorded') follower.offerUnrecorded(wire.message);
    else if (holder && wire.holderToken !== holder.token) holder.writer.end(); // taken over elsewhere
  }

  #poll(writer: SseWriter, follower: StreamFollower): void {
    const timer = setInterval(() => follower.catchUp(), this.#options.pollMs ?? 1000);
    timer.unref();
    writer.onClose(() => clearInterval(timer));
  }

  /** The holder is here: record, write, and publish (a replica taking the stream over may be replaying). */
  #appendHeld(sessionId: string, message: JsonRpcMessage): void {
    const services = this.#services;
    this.#enqueue(sessionId, async () => {
      let event: StoredEvent | undefined;
      if (services.storeAvailable) {
        try {
          event = await services.events.append(sessionId, GET_STREAM, message);
        } catch (err) {
          services.failed('event_store', 'append', err);
        }
      }
      const holder = this.#holders.get(sessionId);
      if (!event) {
        if (holder) holder.follower.offerUnrecorded(message);
        else services.publish(streamChannel(sessionId, GET_STREAM), { type: 'unrecorded', message });
        return;
      }
      holder?.follower.offer(event);
      services.publish(streamChannel(sessionId, GET_STREAM), { type: 'event', event });
    });
  }

  /** No holder here: record only into an existing GET record, and let its holder (if any) write it. */
  #appendUnheld(sessionId: string, message: JsonRpcMessage): void {
    const services = this.#services;
    this.#enqueue(sessionId, async () => {
      const channel = streamChannel(sessionId, GET_STREAM);
      if (!services.storeAvailable) {
        services.publish(channel, { type: 'unrecorded', message });
        return;
      }
      try {
        const event = await services.events.append(sessionId, GET_STREAM, message, { onlyIfExists: true });
        if (event) services.publish(channel, { type: 'event', event });
      } catch (err) {
        services.failed('event_store', 'append', err);
        services.publish(channel, { type: 'unrecorded', message }); // a holder elsewhere still writes it, without an id
      }
    });
  }

  #enqueue(sessionId: string, step: () => Promise<void>): void {
    const next = (this.#appends.get(sessionId) ?? Promise.resolve())
      .then(step)
      .catch((err: unknown) => this.#services.failed('event_store', 'append', err));
    this.#appends.set(sessionId, next);
    void next.then(() => {
      if (this.#appends.get(sessionId) === next) this.#appends.delete(sessionId);
    });
  }

  #wasHeld(sessionId: string): boolean {
    const until = this.#released.get(sessionId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#released.delete(sessionId);
    return false;
  }

  #every(ms: number, fn: () => void): void {
    const timer = setInterval(fn, ms);
    timer.unref();
    this.#timers.push(timer);
  }

  #keepAlive(): void {
    for (const h of this.#holders.values()) h.writer.comment('keep-alive');
    for (const r of this.#resumed) {
      r.writer.comment('keep-alive');
      r.follower.catchUp(); // a lost bus message must not leave a resumed reply waiting forever
    }
  }

  #maintain(): void {
    const services = this.#services;
    const now = Date.now();
    for (const [sessionId, h] of this.#holders) {
      if (services.storeAvailable)
        services.events
          .touch(sessionId, GET_STREAM)
          .catch((err: unknown) => services.failed('event_store', 'touch', err));
      h.follower.catchUp();
    }
    for (const [sessionId, until] of this.#released) if (until <= now) this.#released.delete(sessionId);
  }
}
