/**
 * A problem for each name the rules of `section` (e.g. "quotas.rules") use twice: a rule is
 * counted, reported and kept across a reload by its name, so no two may share one. A rule without
 * a string name is the schema's to refuse.
 */
export function checkUniqueNames(section: string, rules: readonly unknown[], problems: string[]): void {
  const seen = new Set<string>();
  for (const rule of rules) {
    const name = (rule as { name?: unknown } | null | undefined)?.name;
    if (typeof name !== 'string') continue;
    if (seen.has(name)) problems.push(`${section}: the name "${name}" is used twice`);
    seen.add(name);
  }
}
