// What an interceptor server answers (SEP-2624 draft), read defensively: anything not in the
// draft's shape is a protocol failure (which follows the entry's onError), never guessed at.
import type { Phase } from './builtin-interceptors.js';

export interface Hook {
  events: readonly string[];
  phase: Phase;
}

/** One interceptor of interceptors/list. */
export interface Descriptor {
  name: string;
  type: 'validation' | 'mutation';
  hooks: readonly Hook[];
}

export type InvokeResult =
  { type: 'validation'; valid: boolean } | { type: 'mutation'; modified: boolean; payload: unknown };

/** At most this many interceptors are taken from one server's list; more is a broken server. */
const MAX_DESCRIPTORS = 256;

export class WireError extends Error {}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function hookOf(raw: unknown): Hook {
  if (!isRecord(raw) || (raw.phase !== 'request' && raw.phase !== 'response') || !Array.isArray(raw.events))
    throw new WireError('a hook needs phase request|response and events[]');
  const events = raw.events.filter((e): e is string => typeof e === 'string');
  return { events, phase: raw.phase };
}

export function parseDescriptors(result: unknown): Descriptor[] {
  if (!isRecord(result) || !Array.isArray(result.interceptors))
    throw new WireError('interceptors/list answered without interceptors[]');
  if (result.interceptors.length > MAX_DESCRIPTORS)
    throw new WireError(`interceptors/list listed over ${MAX_DESCRIPTORS} interceptors`);
  return result.interceptors.map((raw) => {
    if (!isRecord(raw) || typeof raw.name !== 'string') throw new WireError('an interceptor needs a name');
    if (raw.type !== 'validation' && raw.type !== 'mutation')
      throw new WireError(`interceptor ${raw.name}: type must be validation or mutation`);
    if (!Array.isArray(raw.hooks)) throw new WireError(`interceptor ${raw.name}: hooks[] missing`);
    return { name: raw.name, type: raw.type, hooks: raw.hooks.map(hookOf) };
  });
}

/**
 * A validation refuses when `valid` is false and its severity is error (the draft: warn and info
 * never block; absent reads as error). A mutation's `payload` is taken only when `modified` is true.
 */
export function parseInvokeResult(result: unknown, asked: Descriptor): InvokeResult {
  if (!isRecord(result) || result.type !== asked.type)
    throw new WireError(`interceptor ${asked.name}: the result's type is not ${asked.type}`);
  if (asked.type === 'validation') {
    if (typeof result.valid !== 'boolean') throw new WireError(`interceptor ${asked.name}: valid must be a boolean`);
    const severity = result.severity ?? 'error';
    return { type: 'validation', valid: result.valid || severity !== 'error' };
  }
  if (typeof result.modified !== 'boolean')
    throw new WireError(`interceptor ${asked.name}: modified must be a boolean`);
  if (result.modified && !('payload' in result))
    throw new WireError(`interceptor ${asked.name}: modified without payload`);
  return { type: 'mutation', modified: result.modified, payload: result.payload };
}
