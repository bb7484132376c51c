// A session's found tools (tool search's `expose: list_changed`): the names search_tools returned
// to it or call_tool called for it, the most recent last, kept to a bound. Pure: the session's
// record keeps the list (RequestContext.foundTools), the tool search step decides when to add.

export interface Remembered {
  /** The list to keep. */
  names: string[];
  /** Whether the set of names differs (the session's tools/list changes: it hears list_changed). */
  changed: boolean;
}

/**
 * `kept` with `names` moved or added to its end, cut to the most recent `max`; undefined when
 * that is `kept` as it was (nothing to store). Only a changed set is announced: a name found
 * again moves up, so the bound drops the least recently found, but no list changes.
 */
export function remember(
  kept: readonly string[] | undefined,
  names: readonly string[],
  max: number,
): Remembered | undefined {
  const before = kept ?? [];
  const fresh = new Set(names);
  const next = [...before.filter((n) => !fresh.has(n)), ...fresh].slice(-max);
  if (next.length === before.length && next.every((n, i) => n === before[i])) return undefined;
  const inBefore = new Set(before);
  return { names: next, changed: next.length !== before.length || next.some((n) => !inBefore.has(n)) };
}
