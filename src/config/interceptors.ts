/**
 * `interceptors`: guardrails on what passes through (top level for every endpoint, and in each
 * `servers[]` entry for that endpoint, run after the top level's, order kept). See docs/guardrails.md.
 */
import type { FromSchema } from 'json-schema-to-ts';

export const interceptorSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      enum: ['secrets', 'pii', 'size'],
      description:
        'secrets: credentials (cloud and vendor tokens, private keys, JWTs, connection-string passwords, random ' +
        'values assigned to secret-sounding keys); pii: e-mail addresses, phone numbers, card numbers (Luhn), IBANs; ' +
        'size: result text over maxBytes.',
    },
    action: {
      type: 'string',
      enum: ['redact', 'block'],
      default: 'redact',
      description:
        'redact: each finding becomes [REDACTED:<kind>] (size: the text is cut, with [TRUNCATED:<n> bytes]); block: ' +
        'the request is refused with GUARDRAIL_BLOCKED.',
    },
    mode: {
      type: 'string',
      enum: ['on', 'audit', 'off'],
      default: 'on',
      description: 'audit: findings are counted and logged, nothing is changed or refused; off: not run.',
    },
    phases: {
      type: 'array',
      items: { type: 'string', enum: ['request', 'response'] },
      uniqueItems: true,
      minItems: 1,
      default: ['request', 'response'],
      description:
        "request: a tools/call's or prompts/get's arguments before they go upstream; response: the result of " +
        'tools/call, prompts/get and resources/read before the client sees it.',
    },
    allowFields: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 256 },
      maxItems: 256,
      default: [],
      description: 'Object keys whose string values are not scanned (an `email` field the client is meant to see).',
    },
    maxBytes: {
      type: 'integer',
      minimum: 1,
      description: 'size: the most bytes (UTF-8) of text a result keeps. Required for size.',
    },
  },
  required: ['name'],
} as const;

export const interceptorsSchema = {
  type: 'array',
  items: interceptorSchema,
  maxItems: 32,
  description: 'Guardrails run on each tools/call, prompts/get and resources/read, in order. See docs/guardrails.md.',
} as const;

export type InterceptorConfig = FromSchema<typeof interceptorSchema>;

/** What the schema cannot say. */
export function interceptorsChecks(list: unknown, where: string, problems: string[]): void {
  if (!Array.isArray(list)) return;
  list.forEach((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null) return;
    const e = entry as Record<string, unknown>;
    if (e.name === 'size' && e.maxBytes === undefined) problems.push(`${where}[${i}]: size needs maxBytes`);
    if (e.name !== 'size' && e.maxBytes !== undefined) problems.push(`${where}[${i}]: maxBytes is for size only`);
  });
}
