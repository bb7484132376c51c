/**
 * Shared rate limits (`rateLimits:`): rules that count a client's requests per window, one count
 * across every replica when sessions are in Redis. Absent: no rule, and no request pays for any.
 * See docs/limits-and-errors.md ("Rate limits").
 */
import type { FromSchema } from 'json-schema-to-ts';
import { storeErrorProperties } from './store-error-schema.js';
import { checkUniqueNames } from './unique-names.js';

/** What a rule counts by: one counter per value of it. */
export const RATE_LIMIT_KEYS = ['principal', 'principal+tool', 'tool', 'server', 'global'] as const;
export type RateLimitKey = (typeof RATE_LIMIT_KEYS)[number];

export const globList = (what: string) =>
  ({
    type: 'array',
    minItems: 1,
    items: { type: 'string', minLength: 1 },
    description: `${what} (globs: * any run of characters, ? one character, \\ before either matches it literally).`,
  }) as const;

export const rateLimitRuleSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'One rule: the requests it applies to (match), what it counts them by (key), and how many a window takes.',
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9_.-]+$',
      description: 'Unique; in the refusal (data.rule), the metric label and the counter keys (a rename resets them).',
    },
    match: {
      type: 'object',
      additionalProperties: false,
      description:
        'Which request messages the rule applies to: every key given must match (absent: all of them). A request ' +
        'that names no tool or server (tools/list, ping) matches no rule that asks for one.',
      properties: {
        servers: globList("Upstream names (upstreams[].name) that serve the request's tool, prompt or resource"),
        tools: globList(
          "Tool names of tools/call as the gateway's catalog names them (a virtual server's renamed tool by its " +
            'catalog name)',
        ),
        methods: globList('JSON-RPC methods (tools/call, resources/read, tasks/get, ...)'),
        principals: globList(
          'Principals (auth on: API key name or token issuer and subject); anonymous callers by their client ' +
            'address',
        ),
      },
    },
    key: {
      enum: RATE_LIMIT_KEYS,
      default: 'principal',
      description:
        'What one counter counts: per principal (anonymous callers: per client address), per principal and tool, ' +
        'per tool, per server (upstream), or one for everyone. The tool keys apply to tools/call only, server to ' +
        'requests an upstream serves.',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000000,
      description: 'Requests admitted per window and counter; the next gets RATE_LIMITED (-32015, 429 alone).',
    },
    windowMs: {
      type: 'integer',
      minimum: 1000,
      maximum: 2592000000,
      description: "The window, from a counter's first request; limit more come with each later window.",
    },
    burst: {
      type: 'integer',
      minimum: 0,
      maximum: 1000000000,
      default: 0,
      description:
        'Unused requests a counter may carry into its next windows, up to this many: a window then admits up to ' +
        'limit + burst (a fresh counter starts full). 0: exactly limit per window.',
    },
  },
  required: ['name', 'limit', 'windowMs'],
} as const;

export const rateLimitsSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Shared rate limits: every matching rule is checked per request message (a batch: each message), counted in ' +
    'Redis when sessions are (one count across replicas), else in memory: see docs/limits-and-errors.md.',
  properties: {
    rules: {
      type: 'array',
      items: rateLimitRuleSchema,
      description: 'Checked in order; a request refused by one is not counted by those after it.',
    },
    ...storeErrorProperties({
      unit: 'request',
      counters: 'counter',
      refusal: 'RATE_LIMITED',
      logged: 'Logged (at most once a minute) and counted (mcpgw_rate_limit_store_errors_total).',
    }),
  },
  required: ['rules'],
} as const;

export type RateLimitsConfig = FromSchema<typeof rateLimitsSchema>;
export type RateLimitRuleConfig = RateLimitsConfig['rules'][number];

const TOOL_KEYS: ReadonlySet<string> = new Set(['principal+tool', 'tool']);

/** What the schema cannot say: unique names. */
export function rateLimitsChecks(rateLimits: RateLimitsConfig, problems: string[]): void {
  if (Array.isArray(rateLimits.rules)) checkUniqueNames('rateLimits.rules', rateLimits.rules, problems);
}

/**
 * Rules that select nothing, worth a warning (accepted all the same): a servers glob that fits
 * no upstream, a tools glob that fits no tool (when `tools` lists the whole catalog), a rule that
 * can never match (tools or a tool key with methods that leave tools/call out).
 */
export function rateLimitWarnings(
  rateLimits: RateLimitsConfig | undefined,
  upstreams: readonly string[],
  tools?: readonly string[],
): string[] {
  const warnings: string[] = [];
  for (const rule of rateLimits?.rules ?? []) {
    const where = `rateLimits rule "${rule.name}"`;
    const { tools: toolGlobs, methods } = rule.match ?? {};
    warnings.push(...matchWarnings(where, rule.match, upstreams, tools));
    const callsTools = methods === undefined || methods.some((m) => compileGlob(m).test('tools/call'));
    if (!callsTools && (toolGlobs !== undefined || TOOL_KEYS.has(rule.key)))
      warnings.push(
        `${where}: can never match (tools or key "${rule.key}" count tools/call only, methods leave it out)`,
      );
  }
  return warnings;
}

/** A rule's servers and tools globs that fit no upstream or (`tools` given: the whole catalog) no tool. */
export function matchWarnings(
  where: string,
  match: { servers?: string[]; tools?: string[] } | undefined,
  upstreams: readonly string[],
  tools: readonly string[] | undefined,
): string[] {
  const warnings: string[] = [];
  for (const g of match?.servers ?? [])
    if (!upstreams.some((u) => compileGlob(g).test(u))) warnings.push(`${where}: servers "${g}" fits no upstream`);
  if (tools)
    for (const g of match?.tools ?? [])
      if (!tools.some((t) => compileGlob(g).test(t))) warnings.push(`${where}: tools "${g}" fits no tool`);
  return warnings;
}

/** A whole-string glob: `*` any run of characters, `?` one, `\` before `*`, `?` or `\` that character itself. */
export interface GlobMatcher {
  test(subject: string): boolean;
}

/** One character of a part: itself, or any (`?`). */
const ANY = null;

/**
 * Linear in the subject for each part: parts between `*`s are placed at their leftmost fit,
 * which never hinders a later one (as config/tool-filter.ts does for `*` alone).
 */
export function compileGlob(glob: string): GlobMatcher {
  const parts: Array<Array<string | null>> = [[]];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) parts[parts.length - 1]!.push(glob[++i]!);
    else if (c === '*') parts.push([]);
    else parts[parts.length - 1]!.push(c === '?' ? ANY : c);
  }
  const fits = (subject: string, part: Array<string | null>, at: number) =>
    part.every((c, j) => c === ANY || subject[at + j] === c);
  if (parts.length === 1) {
    const only = parts[0]!;
    return { test: (s) => s.length === only.length && fits(s, only, 0) };
  }
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1);
  return {
    test(s) {
      if (s.length < first.length + last.length) return false;
      const end = s.length - last.length;
      if (!fits(s, first, 0) || !fits(s, last, end)) return false;
      let at = first.length;
      for (const part of middle) {
        let i = at;
        while (i + part.length <= end && !fits(s, part, i)) i++;
        if (i + part.length > end) return false;
        at = i + part.length;
      }
      return true;
    },
  };
}
