/**
 * Quotas (`quotas:`): how many tool calls, or how many seconds of upstream time, each principal
 * may use per UTC calendar day or month; one count across every replica when sessions are in
 * Redis. Absent: no quota, and no request pays for any. See docs/limits-and-errors.md ("Quotas").
 */
import type { FromSchema } from 'json-schema-to-ts';
import { globList, matchWarnings } from './rate-limits.js';
import { storeErrorProperties } from './store-error-schema.js';
import { checkUniqueNames } from './unique-names.js';

/** The calendar windows a quota counts in (UTC). */
export const QUOTA_WINDOWS = ['day', 'month'] as const;
export type QuotaWindow = (typeof QUOTA_WINDOWS)[number];

export const quotaRuleSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'One quota: the tool calls it applies to (match), its window, and what each principal may use in one: calls, ' +
    'upstreamSeconds or both (at least one).',
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9_.-]+$',
      description: 'Unique; in the refusal (data.quota), /status and the counter keys (a rename resets them).',
    },
    match: {
      type: 'object',
      additionalProperties: false,
      description:
        'Which tools/call messages the quota applies to: every key given must match (absent: every tool call).',
      properties: {
        servers: globList("Upstream names (upstreams[].name) that serve the call's tool"),
        tools: globList(
          "Tool names as the gateway's catalog names them (a virtual server's renamed tool by its catalog name)",
        ),
        principals: globList(
          'Principals (auth on: API key name or token issuer and subject); anonymous callers by their client ' +
            'address',
        ),
      },
    },
    window: {
      enum: QUOTA_WINDOWS,
      description: 'A UTC calendar day or month: every count starts again at 00:00 UTC of the next one.',
    },
    calls: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000000,
      description: 'Tool calls a principal may make per window; the next gets QUOTA_EXCEEDED (-32015, 429 alone).',
    },
    upstreamSeconds: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 1000000000,
      description:
        "Seconds a principal's calls may spend upstream per window, counted as each call ends; once used up, " +
        'the next call gets QUOTA_EXCEEDED (a call running then may end past it).',
    },
  },
  required: ['name', 'window'],
} as const;

export const quotasSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Per-principal quotas of tool calls and upstream time per UTC day or month, counted in Redis when sessions ' +
    'are (one count across replicas, kept across restarts), else in memory: see docs/limits-and-errors.md.',
  properties: {
    rules: {
      type: 'array',
      items: quotaRuleSchema,
      description: 'Every quota that matches a call applies; a call refused by one is not counted by those after it.',
    },
    ...storeErrorProperties({
      unit: 'call',
      counters: 'counters',
      refusal: 'QUOTA_EXCEEDED',
      logged: 'Logged at most once a minute.',
    }),
    topConsumers: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 10,
      description: "How many principals /status shows per quota and measure (those who used most of this window's).",
    },
  },
  required: ['rules'],
} as const;

export type QuotasConfig = FromSchema<typeof quotasSchema>;
export type QuotaRuleConfig = QuotasConfig['rules'][number];

/** What the schema cannot say: unique names, and something to count. */
export function quotasChecks(quotas: QuotasConfig, problems: string[]): void {
  if (!Array.isArray(quotas.rules)) return;
  checkUniqueNames('quotas.rules', quotas.rules, problems);
  for (const rule of quotas.rules) {
    if (typeof rule?.name !== 'string') continue;
    if (rule.calls === undefined && rule.upstreamSeconds === undefined)
      problems.push(`quotas.rules: "${rule.name}" counts nothing: give calls, upstreamSeconds or both`);
  }
}

/** Quotas whose globs select nothing, worth a warning (accepted all the same), as rateLimitWarnings says. */
export function quotaWarnings(
  quotas: QuotasConfig | undefined,
  upstreams: readonly string[],
  tools?: readonly string[],
): string[] {
  return (quotas?.rules ?? []).flatMap((rule) =>
    matchWarnings(`quotas rule "${rule.name}"`, rule.match, upstreams, tools),
  );
}
