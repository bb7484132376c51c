/**
 * The pin lock file: per upstream, the digest of each tool's and prompt's definition. A digest
 * is sha256 over the canonical JSON (keys sorted at every depth, no spaces) of the fields a
 * client reads to decide what a tool does: name, title, description, inputSchema, outputSchema,
 * annotations (prompts: name, title, description, arguments). Not `_meta` or icons: they say
 * nothing a model acts on, and some servers stamp them per run. Pure: every replica that reads
 * the same file decides alike.
 *
 * Format (version 1; docs/pinning.md):
 *   { "version": 1, "upstreams": { "<upstream>": {
 *       "tools": { "<name>": { "sha256": "<64 hex>", "definition": { <the pinned fields> } } },
 *       "prompts": { ... } } } }
 * `sha256` alone decides; `definition` is what was pinned, for review and for `mcpgw pin`'s diff.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const LOCK_VERSION = 1;

export type PinKind = 'tools' | 'prompts';
export const PIN_KINDS: readonly PinKind[] = ['tools', 'prompts'];

/** The fields of a definition its digest covers. */
export const PINNED_FIELDS: Record<PinKind, readonly string[]> = {
  tools: ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'],
  prompts: ['name', 'title', 'description', 'arguments'],
};

export interface Pin {
  sha256: string;
  /** The pinned fields as they were pinned (absent: a lock written by hand with digests only). */
  definition?: Record<string, unknown>;
}

export interface UpstreamPins {
  tools: Record<string, Pin>;
  prompts: Record<string, Pin>;
}

export interface PinLock {
  version: typeof LOCK_VERSION;
  upstreams: Record<string, UpstreamPins>;
}

export const EMPTY_LOCK: PinLock = { version: LOCK_VERSION, upstreams: {} };

const DIGEST = /^[0-9a-f]{64}$/;

/** The lock's pin of one entry (own keys only: a tool named "constructor" is no prototype's). */
export function pinOf(lock: PinLock, upstream: string, kind: PinKind, name: string): Pin | undefined {
  const pins = Object.hasOwn(lock.upstreams, upstream) ? lock.upstreams[upstream] : undefined;
  return pins && Object.hasOwn(pins[kind], name) ? pins[kind][name] : undefined;
}

/** JSON with every object's keys sorted: the same value, however its keys were ordered, gives one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The pinned fields of a definition, as the digest covers them (absent fields left out). */
export function pinnedPart(kind: PinKind, definition: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const part: Record<string, unknown> = {};
  for (const field of PINNED_FIELDS[kind]) if (definition[field] !== undefined) part[field] = definition[field];
  return part;
}

/** sha256 (hex) of the canonical JSON of a definition's pinned fields. */
export function definitionDigest(kind: PinKind, definition: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(canonicalJson(pinnedPart(kind, definition)))
    .digest('hex');
}

export class PinLockError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'PinLockError';
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A lock file's text as a PinLock; anything else is a PinLockError naming `file` and the first problem. */
export function parseLock(text: string, file: string): PinLock {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PinLockError(file, `not valid JSON (${(err as Error).message})`);
  }
  if (!isRecord(parsed)) throw new PinLockError(file, 'not a JSON object');
  if (parsed.version !== LOCK_VERSION)
    throw new PinLockError(file, `version must be ${LOCK_VERSION} (found ${JSON.stringify(parsed.version)})`);
  if (!isRecord(parsed.upstreams)) throw new PinLockError(file, '"upstreams" must be an object');
  const upstreams: Record<string, UpstreamPins> = {};
  for (const [name, pins] of Object.entries(parsed.upstreams)) {
    if (!isRecord(pins)) throw new PinLockError(file, `upstreams.${name} must be an object`);
    const entry: UpstreamPins = { tools: {}, prompts: {} };
    for (const kind of PIN_KINDS) {
      const digests = pins[kind] ?? {};
      if (!isRecord(digests)) throw new PinLockError(file, `upstreams.${name}.${kind} must be an object`);
      for (const [entryName, pin] of Object.entries(digests)) {
        const at = `upstreams.${name}.${kind}.${entryName}`;
        if (!isRecord(pin)) throw new PinLockError(file, `${at} must be an object with "sha256"`);
        if (typeof pin.sha256 !== 'string' || !DIGEST.test(pin.sha256))
          throw new PinLockError(file, `${at}.sha256: not a sha256 digest (64 lowercase hex digits)`);
        if (pin.definition !== undefined && !isRecord(pin.definition))
          throw new PinLockError(file, `${at}.definition must be an object`);
        entry[kind][entryName] = pin.definition
          ? { sha256: pin.sha256, definition: pin.definition }
          : { sha256: pin.sha256 };
      }
    }
    upstreams[name] = entry;
  }
  return { version: LOCK_VERSION, upstreams };
}

/** The lock in `file`; a file that does not exist is the empty lock (nothing pinned yet). */
export function readLockFile(file: string): PinLock {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return EMPTY_LOCK;
    throw new PinLockError(file, `cannot be read (${code ?? String(err)})`);
  }
  return parseLock(text, file);
}

/** The lock as written: keys sorted, two-space indent, a final newline (a stable diff in review). */
export function formatLock(lock: PinLock): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(lock)), null, 2)}\n`;
}
