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

/** A whole-string `*` glob (`*`: any run of characters). */
export interface Glob {
  test(subject: string): boolean;
}

/**
 * A glob as a matcher in linear time: as a RegExp (`^a.*b.*c$`), V8 backtracks polynomially in
 * the subject, and subjects are what upstreams and clients write (tool names, resource URIs).
 * Each literal part is placed at its leftmost fit, which is never worse for a later one.
 */
export function globPattern(glob: string): Glob {
  const parts = glob.split('*');
  if (parts.length === 1) return { test: (subject) => subject === glob };
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1);
  return {
    test(subject) {
      if (subject.length < first.length + last.length) return false;
      if (!subject.startsWith(first) || !subject.endsWith(last)) return false;
      const end = subject.length - last.length;
      let at = first.length;
      for (const part of middle) {
        const i = subject.indexOf(part, at);
        if (i === -1 || i + part.length > end) return false;
        at = i + part.length;
      }
      return true;
    },
  };
}
