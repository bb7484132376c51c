/**
 * What `mcpgw pin` changes in a lock, and how it says so: per upstream, the tools and prompts
 * added, removed and changed, a changed one with a line diff of each pinned field that differs
 * (the lock keeps the pinned definition for this). Pure: the command (gateway/pin-command.ts)
 * supplies the lists.
 */
import {
  PIN_KINDS,
  canonicalJson,
  definitionDigest,
  pinnedPart,
  type Pin,
  type PinKind,
  type PinLock,
  type UpstreamPins,
} from './pin-lock.js';

export interface PinChange {
  upstream: string;
  kind: PinKind;
  name: string;
  change: 'added' | 'removed' | 'changed';
  /** changed: the fields that differ, each as diff lines (' ', '-', '+' first). */
  fields?: Array<{ field: string; lines: string[] }>;
}

/** An upstream's current pins from its lists (tools and prompts as the upstream names them). */
export function pinsOf(lists: Partial<Record<PinKind, ReadonlyArray<Record<string, unknown>>>>): UpstreamPins {
  const pins: UpstreamPins = { tools: {}, prompts: {} };
  for (const kind of PIN_KINDS)
    for (const entry of lists[kind] ?? []) {
      if (typeof entry.name !== 'string') continue;
      pins[kind][entry.name] = { sha256: definitionDigest(kind, entry), definition: pinnedPart(kind, entry) };
    }
  return pins;
}

/** `lock` with `current` in place of those upstreams' pins (the others kept), and what that changes. */
export function updateLock(
  lock: PinLock,
  current: ReadonlyMap<string, UpstreamPins>,
): { lock: PinLock; changes: PinChange[] } {
  const upstreams: Record<string, UpstreamPins> = { ...lock.upstreams };
  const changes: PinChange[] = [];
  for (const [upstream, now] of current) {
    const was = Object.hasOwn(lock.upstreams, upstream) ? lock.upstreams[upstream]! : { tools: {}, prompts: {} };
    for (const kind of PIN_KINDS) changes.push(...kindChanges(upstream, kind, was[kind], now[kind]));
    upstreams[upstream] = now;
  }
  return { lock: { version: lock.version, upstreams }, changes };
}

function kindChanges(upstream: string, kind: PinKind, was: Record<string, Pin>, now: Record<string, Pin>): PinChange[] {
  const changes: PinChange[] = [];
  for (const name of Object.keys(now).sort()) {
    const before = Object.hasOwn(was, name) ? was[name] : undefined;
    if (!before) changes.push({ upstream, kind, name, change: 'added' });
    else if (before.sha256 !== now[name]!.sha256)
      changes.push({ upstream, kind, name, change: 'changed', fields: fieldDiffs(before, now[name]!) });
  }
  for (const name of Object.keys(was).sort())
    if (!Object.hasOwn(now, name)) changes.push({ upstream, kind, name, change: 'removed' });
  return changes;
}

/** Each pinned field that differs, as lines; a pin without its definition (hand-written) says only that. */
function fieldDiffs(before: Pin, after: Pin): Array<{ field: string; lines: string[] }> {
  if (!before.definition) return [{ field: '(definition)', lines: ['  (not kept in the lock: digest only)'] }];
  const a = before.definition;
  const b = after.definition ?? {};
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return fields
    .filter((f) => canonicalJson(a[f]) !== canonicalJson(b[f]))
    .map((field) => ({ field, lines: lineDiff(shown(a[field]), shown(b[field])) }));
}

function shown(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split('\n');
  return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2).split('\n');
}

/** A unified-ish diff: the common first and last lines as context, the rest removed then added. */
export function lineDiff(before: readonly string[], after: readonly string[]): string[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail++;
  const context = (lines: readonly string[]) => lines.map((l) => `  ${l}`);
  return [
    ...context(before.slice(Math.max(0, head - 2), head)),
    ...before.slice(head, before.length - tail).map((l) => `- ${l}`),
    ...after.slice(head, after.length - tail).map((l) => `+ ${l}`),
    ...context(after.slice(after.length - tail, Math.min(after.length, after.length - tail + 2))),
  ];
}

/** The changes as `mcpgw pin` prints them, grouped by upstream; nothing changed: one line saying so. */
export function describeChanges(changes: readonly PinChange[]): string[] {
  if (changes.length === 0) return ['no changes: every listed definition is pinned as it is'];
  const lines: string[] = [];
  const sign = { added: '+', removed: '-', changed: '~' } as const;
  let upstream: string | undefined;
  for (const c of changes) {
    if (c.upstream !== upstream) lines.push(`upstream ${(upstream = c.upstream)}:`);
    lines.push(`  ${sign[c.change]} ${c.kind === 'tools' ? 'tool' : 'prompt'} ${c.name} (${c.change})`);
    for (const f of c.fields ?? []) lines.push(`      ${f.field}:`, ...f.lines.map((l) => `        ${l}`));
  }
  return lines;
}
