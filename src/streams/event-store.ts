import type { JsonRpcMessage } from '../jsonrpc/messages.js';

/**
 * One recorded SSE event. A stream's events are kept in order; each names the one before it, so
 * a reader that sees `previous` differ from the last position it wrote knows it missed some.
 */
export interface StoredEvent {
  /** Where the event sits in its stream: `<ms>-<n>`, increasing, compared with `comparePositions`. */
  position: string;
  /** The position of the event before it ('' for a stream's first event). */
  previous: string;
  /** undefined for a marker (a stream opened, a priming event): nothing to deliver. */
  message: JsonRpcMessage | undefined;
  /** The last event of its stream (a POST reply's last response): nothing follows it. */
  final: boolean;
}

export interface AppendOptions {
  final?: boolean;
  /** Record only if the stream exists already (a session's GET stream that someone opened). */
  onlyIfExists?: boolean;
}

export interface Replay {
  /** The event the reader last saw (still retained, so nothing after it was trimmed). */
  anchor: StoredEvent;
  /** Every retained event after the anchor, in order. */
  events: StoredEvent[];
}

/** How long and how much a stream keeps. */
export interface EventStoreLimits {
  /** Events kept per stream (older ones are dropped first). */
  maxEvents: number;
  /** Events older than this are dropped; a stream nobody wrote to (or touched) for this long is dropped whole. */
  maxAgeMs: number;
}

/**
 * The events of a session's SSE streams, kept so that a client can resume a stream it lost, on
 * any replica. Streams are named per session (`streamId` is unique within its session); keys of
 * one session share a Redis Cluster slot. Bounded per stream by length and age.
 */
export interface EventStore {
  /** Records an event at the end of a stream; undefined when `onlyIfExists` found no stream. */
  append(
    sessionId: string,
    streamId: string,
    message: JsonRpcMessage | undefined,
    options?: AppendOptions,
  ): Promise<StoredEvent | undefined>;
  /** The events after `position`; undefined when that event is not retained (unknown, trimmed or expired). */
  replay(sessionId: string, streamId: string, position: string): Promise<Replay | undefined>;
  /** Keeps a stream that still has a reader from expiring while nothing is written to it. */
  touch(sessionId: string, streamId: string): Promise<void>;
  /** Drops every stream of a session that ended: nothing is left to resume. */
  forgetSession(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

const POSITION = /^(\d{1,15})-(\d{1,15})$/;

export function isPosition(s: string): boolean {
  return POSITION.test(s);
}

/** Orders two positions of one stream (negative: a is earlier). */
export function comparePositions(a: string, b: string): number {
  const pa = POSITION.exec(a);
  const pb = POSITION.exec(b);
  if (!pa || !pb) return a === b ? 0 : a < b ? -1 : 1;
  return Number(pa[1]) - Number(pb[1]) || Number(pa[2]) - Number(pb[2]);
}
