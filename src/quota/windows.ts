/**
 * A quota's window: one UTC calendar day or month. Every replica names a window the same way
 * (its id, part of the counter keys), so their counts meet; a new window is new keys, which is the
 * reset, at 00:00 UTC whatever the time of the first call.
 */
import type { QuotaWindow } from '../config/schema.js';

export interface WindowSpan {
  /** `2026-12-04` (a day) or `2026-12` (a month). */
  id: string;
  /** ms since the epoch: its first instant, and the first instant of the next window. */
  start: number;
  end: number;
}

const two = (n: number) => String(n).padStart(2, '0');

/** The window of `kind` that holds the instant `now` (ms). */
export function windowAt(kind: QuotaWindow, now: number): WindowSpan {
  const d = new Date(now);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  if (kind === 'month')
    return { id: `${year}-${two(month + 1)}`, start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
  const day = d.getUTCDate();
  return {
    id: `${year}-${two(month + 1)}-${two(day)}`,
    start: Date.UTC(year, month, day),
    end: Date.UTC(year, month, day + 1),
  };
}
