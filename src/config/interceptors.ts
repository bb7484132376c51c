/**
 * `interceptors`: guardrails on what passes through (top level for every endpoint, in each
 * `servers[]` entry for that endpoint, in each `upstreams[]` entry for that upstream; the order of
 * the three: guardrails/chains.ts). An entry is a built-in (`name: secrets | pii | size`) or an
 * interceptor server (`server:`, SEP-2624). See docs/guardrails.md. The checks the schema cannot
 * make are interceptor-servers.ts's (they build an upstream entry, which imports the upstream schema).
 */
import type { FromSchema } from 'json-schema-to-ts';

/** The events an interceptor server may take: those the gateway intercepts today (the last two: an upstream's asks). */
export const INTERCEPTED_EVENTS = [
  'tools/call',
  'prompts/get',
  'resources/read',
  'sampling/createMessage',
  'elicitation/create',
] as const;

const phasesSchema = {
  type: 'array',
  items: { type: 'string', enum: ['request', 'response'] },
  uniqueItems: true,
  minItems: 1,
  description:
    "request: a tools/call's or prompts/get's arguments before they go upstream, and an upstream's " +
    'sampling/createMessage or elicitation/create before the client sees it; response: the result of tools/call, ' +
    "prompts/get and resources/read before the client sees it, and the client's answer to an upstream's ask before " +
    'the upstream does. Built-ins only; default both.',
} as const;

const stdioServerSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['command'],
} as const;

const httpServerSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', pattern: '^https?://' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['url'],
} as const;

/** Every key an entry may have, for the reader (docs/configuration.md); which kind takes which is below. */
const entryProperties = {
  name: {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    description:
      'A built-in: secrets (credentials: cloud and vendor tokens, private keys, JWTs, connection-string passwords, ' +
      'random values assigned to secret-sounding keys), pii (e-mail addresses, phone numbers, card numbers (Luhn), ' +
      'IBANs) or size (result text over maxBytes); with `server`: any name, the one its verdicts and errors carry.',
  },
  action: {
    type: 'string',
    enum: ['redact', 'block'],
    description:
      'Built-ins (default redact). redact: each finding becomes [REDACTED:<kind>] (size: the text is cut, with ' +
      '[TRUNCATED:<n> bytes]); block: the request is refused with GUARDRAIL_BLOCKED.',
  },
  mode: {
    type: 'string',
    enum: ['on', 'audit', 'off'],
    default: 'on',
    description: 'audit: findings are counted and logged, nothing is changed or refused; off: not run.',
  },
  phases: phasesSchema,
  allowFields: {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 256 },
    maxItems: 256,
    description:
      'Built-ins: object keys whose string values are not scanned (an `email` field the client is meant to see).',
  },
  maxBytes: {
    type: 'integer',
    minimum: 1,
    description: 'size: the most bytes (UTF-8) of text a result keeps. Required for size.',
  },
  server: {
    description:
      'An interceptor server (SEP-2624): a child process (`command`, `args`, `env`) or a Streamable HTTP URL ' +
      '(`url`, `headers`), never both. Its interceptors are learnt with interceptors/list.',
    oneOf: [stdioServerSchema, httpServerSchema],
  },
  events: {
    type: 'array',
    items: { type: 'string', enum: INTERCEPTED_EVENTS },
    uniqueItems: true,
    minItems: 1,
    description: 'With `server`: the events it is invoked for (the hooks it lists narrow them further).',
  },
  onError: {
    type: 'string',
    enum: ['allow', 'deny'],
    description:
      'With `server` (default deny): when it times out, crashes or answers garbage, allow passes the message ' +
      '(counted as verdict error) and deny refuses it with INTERCEPTOR_FAILED.',
  },
  timeoutMs: {
    type: 'integer',
    minimum: 1,
    maximum: 60000,
    description:
      'With `server` (default 2000): how long one phase of one message may wait for it, ' +
      'the first connect and interceptors/list included',
  },
} as const;

/** What the chosen kind adds: its defaults (applied here, where ajv applies them) and the keys it refuses. */
const builtinBranch = {
  properties: {
    name: { enum: ['secrets', 'pii', 'size'] },
    action: { default: 'redact' },
    phases: { default: ['request', 'response'] },
    allowFields: { default: [] },
    events: false,
    onError: false,
    timeoutMs: false,
  },
} as const;

const serverBranch = {
  properties: {
    server: true,
    events: true,
    onError: { default: 'deny' },
    timeoutMs: { default: 2000 },
    action: false,
    phases: false,
    allowFields: false,
    maxBytes: false,
  },
  required: ['server', 'events'],
} as const;

export const interceptorSchema = {
  type: 'object',
  additionalProperties: false,
  properties: entryProperties,
  required: ['name'],
  // A built-in or a server, told apart by `server` (if/then/else: ajv applies the branch's defaults).
  if: { properties: { server: true }, required: ['server'] },
  then: serverBranch,
  else: builtinBranch,
} as const;

export const interceptorsSchema = {
  type: 'array',
  items: interceptorSchema,
  maxItems: 32,
  description:
    'Guardrails run on each tools/call, prompts/get and resources/read, and on the sampling and elicitation ' +
    'requests upstreams send clients, in order. See docs/guardrails.md.',
} as const;

/** An entry as loaded: a branch's defaults are there, its refused keys absent. */
export type InterceptorConfig = FromSchema<typeof interceptorSchema>;
export type InterceptorServerConfig = NonNullable<InterceptorConfig['server']>;
/** An interceptor server's entry (`server:`), as the schema's `then` branch leaves it. */
export type ServerInterceptorConfig = InterceptorConfig & {
  server: InterceptorServerConfig;
  events: Array<(typeof INTERCEPTED_EVENTS)[number]>;
};

export function isServerEntry(c: InterceptorConfig): c is ServerInterceptorConfig {
  return 'server' in c && c.server !== undefined;
}
