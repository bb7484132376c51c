/**
 * The `pinning` section (and `upstreams[].pinning`): tool and prompt definitions held to the
 * digests of a lock file (config/pin-lock.ts), against an upstream that changes a definition
 * after it was reviewed (a "rug pull"). The lock is read here at load, so a malformed one is a
 * config error naming the file, at start-up, for --check and for a reload alike.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { readLockFile } from './pin-lock.js';

const modeSchema = {
  type: 'string',
  enum: ['off', 'warn', 'enforce'],
  description:
    'off: definitions are not compared; warn: one the lock does not pin is served, logged, counted ' +
    '(mcpgw_tool_definition_changes_total), audited and flagged on /status; enforce: it is neither listed nor ' +
    'callable (TOOL_DEFINITION_CHANGED, TOOL_NOT_PINNED) until the lock pins it (mcpgw pin, then a reload).',
} as const;

export const pinningSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Tool and prompt definitions pinned by digest (see docs/pinning.md).',
  properties: {
    mode: { ...modeSchema, default: 'off' },
    lockFile: {
      type: 'string',
      minLength: 1,
      description:
        'The lock (JSON, written by `mcpgw pin --config FILE`); needed when any mode is not off. Every replica ' +
        'reads the same file: their decisions agree. A missing file pins nothing; a reload reads it again.',
    },
  },
  required: [],
  default: {},
} as const;

/** `upstreams[].pinning`: this upstream's mode, over the top-level one. */
export const upstreamPinningSchema = {
  type: 'object',
  additionalProperties: false,
  description: "This upstream's pinning mode (default: the top-level pinning.mode).",
  properties: { mode: modeSchema },
  required: [],
} as const;

export type PinningConfig = FromSchema<typeof pinningSchema>;
export type PinMode = 'off' | 'warn' | 'enforce';

/** Each upstream's mode: its own, else the section's. */
export function pinModes(
  pinning: PinningConfig | undefined,
  upstreams: ReadonlyArray<{ name: string; pinning?: { mode?: PinMode } }>,
): Map<string, PinMode> {
  const fallback = pinning?.mode ?? 'off';
  return new Map(upstreams.map((u) => [u.name, u.pinning?.mode ?? fallback]));
}

/** A lock file is named where a mode needs one, and it parses (a missing one is an empty lock). */
export function pinningChecks(pinning: PinningConfig | undefined, upstreams: unknown, problems: string[]): void {
  if (typeof pinning !== 'object' || pinning === null || !Array.isArray(upstreams)) return;
  const named = upstreams.filter(
    (u): u is { name: string; pinning?: { mode?: PinMode } } => typeof u === 'object' && u !== null,
  );
  const on = [...pinModes(pinning, named).values()].some((m) => m !== 'off');
  if (!pinning.lockFile) {
    if (on) problems.push("pinning.lockFile: needed when pinning.mode (or an upstream's) is warn or enforce");
    return;
  }
  try {
    readLockFile(pinning.lockFile);
  } catch (err) {
    problems.push(`pinning.lockFile: ${err instanceof Error ? err.message : String(err)}`);
  }
}
