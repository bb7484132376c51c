/**
 * Which of an upstream's tools the gateway offers (`tools.allow` / `tools.deny` of its config),
 * by the upstream's own tool names; `*` matches any run of characters. Deny wins over allow; no
 * allow list means every tool not denied. A tool left out is neither listed nor callable: to
 * clients it does not exist.
 */
export function toolFilter(rules: { allow?: string[]; deny?: string[] } | undefined): (name: string) => boolean {
  if (!rules || (!rules.allow && !rules.deny)) return () => true;
  const allow = rules.allow?.map(globPattern);
  const deny = (rules.deny ?? []).map(globPattern);
  return (name) => !deny.some((p) => p.test(name)) && (allow === undefined || allow.some((p) => p.test(name)));
}

export function globPattern(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}
