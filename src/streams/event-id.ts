import { randomBytes } from 'node:crypto';
import { isPosition } from './event-store.js';

/**
 * SSE event ids: `<stream>.<position>`. The stream part names one of the session's streams (a
 * POST reply's random id, or `get` for the session's GET stream), so a GET with Last-Event-ID
 * finds the stream to resume without any index; the position is the event's place in that
 * stream's record. Visible ASCII only; clients treat the whole as opaque.
 */
export const GET_STREAM = 'get';

const EVENT_ID = /^([A-Za-z0-9_-]{1,32})\.([0-9-]{3,31})$/;

/** A fresh POST stream id: 72 random bits, base64url (never `get`: that is 3 characters). */
export function newStreamId(): string {
  return randomBytes(9).toString('base64url');
}

export function formatEventId(streamId: string, position: string): string {
  return `${streamId}.${position}`;
}

/** undefined when the id is not one of ours (then nothing can be resumed from it). */
export function parseEventId(id: string): { streamId: string; position: string } | undefined {
  const m = EVENT_ID.exec(id);
  if (!m || !isPosition(m[2]!)) return undefined;
  return { streamId: m[1]!, position: m[2]! };
}
