/** What every upstream has, whatever its transport: the keys' schema (the pool's too) and their checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { upstreamTasksSchema } from './tasks.js';

export const poolSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    min: { type: 'integer', minimum: 0, default: 1 },
    // mode per-session, stdio: processes started ahead of the sessions (or stateless requests) that will use them.
    spares: { type: 'integer', minimum: 0, maximum: 16, default: 1 },
    max: { type: 'integer', minimum: 1, default: 4 },
    maxInFlight: { type: 'integer', minimum: 1, default: 32 },
    // Shared mode: a worker whose unanswered requests weigh this much (characters of JSON) takes
    // no more calls until they are answered, however few they are; another starts, up to max. A
    // stdio worker reads its calls in order: small calls go to a worker not busy with large ones.
    // 0: no bound by weight. One call larger than this still runs, alone on its worker.
    maxInFlightBytes: { type: 'integer', minimum: 0, default: 2097152 },
    queueSize: { type: 'integer', minimum: 0, default: 1000 },
    queueTimeoutMs: { type: 'integer', minimum: 1, default: 5000 },
    // Shared mode: a worker with calls in flight and no answer for this long counts as busy, as a
    // full one does (another starts, up to max): a stdio worker answers in order, so one slow or
    // large call holds up every call behind it. 0: only maxInFlight makes a worker busy.
    busyAfterMs: { type: 'integer', minimum: 0, default: 1000 },
    idleTimeoutMs: { type: 'integer', minimum: 1000, default: 300000 },
  },
  required: [],
} as const;

export type PoolConfig = FromSchema<typeof poolSchema>;

/** Spread into each transport's schema, so each one names every key it accepts. */
export const commonUpstreamProperties = {
  name: { type: 'string', pattern: '^[a-z0-9-]+$', maxLength: 64 },
  mode: { type: 'string', enum: ['shared', 'per-session'], default: 'shared' },
  pool: { ...poolSchema, default: {} },
  timeoutMs: { type: 'integer', minimum: 1, default: 60000 },
  maxTimeoutMs: { type: 'integer', minimum: 1, default: 600000 },
  // null (a YAML key with no value) is taken as not set: see dropNullKeys.
  prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]*$', maxLength: 64, nullable: true },
  // /readyz fails while this upstream is down (default: only while it is still starting).
  required: { type: 'boolean', default: false },
  // Which MCP revision the gateway speaks to it: `auto` learns it (server/discover for 2026-07-28,
  // else initialize for the 2025 revisions; over http only: stdio and sse upstreams speak 2025),
  // or a pinned revision, asked for without a try of the other era.
  protocolVersion: { type: 'string', enum: ['auto', '2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], default: 'auto' },
  // tools/call arguments are checked against the tool's inputSchema before they reach the upstream.
  validateArguments: { type: 'boolean', default: true },
  // uris: prefixed: this upstream's resource URIs and templates are offered as `<prefix>+<uri>`
  // (so two copies of one server can sit behind one gateway); as-is: unchanged.
  resources: {
    type: 'object',
    additionalProperties: false,
    properties: { uris: { type: 'string', enum: ['as-is', 'prefixed'], default: 'as-is' } },
    required: [],
  },
  // Which of the upstream's tools the gateway offers, by their own names (`*` matches any run of characters).
  tools: {
    type: 'object',
    additionalProperties: false,
    properties: {
      allow: { type: 'array', items: { type: 'string', minLength: 1 } },
      deny: { type: 'array', items: { type: 'string', minLength: 1 } },
    },
    required: [],
  },
  // Tools the gateway runs as tasks for its clients (see config/tasks.ts).
  tasks: upstreamTasksSchema,
} as const;

/**
 * A derived upstream type with `keys` no longer nullable: the schema accepts null there (a YAML
 * key with no value), and dropNullKeys removes such a key before the config is handed on.
 */
export type WithoutNull<T, K extends keyof T> = Omit<T, K> & { [P in K]?: Exclude<T[P], null> };

/** What every upstream has, whatever its transport. */
export type UpstreamCommon = WithoutNull<FromSchema<{ type: 'object'; additionalProperties: false; properties: typeof commonUpstreamProperties; required: ['name'] }>, 'prefix'>;

/** A null key means "not set", as its absence does (`prefix ?? name`; spawn's cwd): the key goes, so the types need no null. */
export function dropNullKeys(u: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of keys) if (u[key] === null) delete u[key];
}

/** Bounds that must come in order. */
export function commonUpstreamChecks(u: UpstreamCommon, at: string, problems: string[]): void {
  if (u.pool?.min > u.pool?.max) problems.push(`${at}.pool.min: must be <= pool.max (${u.pool.max})`);
  if (u.timeoutMs > u.maxTimeoutMs) problems.push(`${at}.timeoutMs: must be <= maxTimeoutMs (${u.maxTimeoutMs})`);
  if (u.resources?.uris === 'prefixed' && (u.prefix ?? u.name) === '') problems.push(`${at}.resources.uris: "prefixed" needs a prefix that is not empty (prefix: "")`);
}

/** Whether an upstream's `protocolVersion` lets the gateway speak 2026-07-28 to it (try it, for `auto`). */
export function speaksModern(u: { transport: string; protocolVersion?: string }): 'no' | 'try' | 'only' {
  if (u.transport !== 'http') return 'no';
  if (u.protocolVersion === undefined || u.protocolVersion === 'auto') return 'try';
  return u.protocolVersion >= '2026-07-28' ? 'only' : 'no';
}

/** A pinned 2026-07-28 upstream must be reachable over Streamable HTTP, the one wire that revision has here. */
export function protocolVersionChecks(u: { transport: string; protocolVersion?: string }, at: string, problems: string[]): void {
  if (u.transport !== 'http' && typeof u.protocolVersion === 'string' && u.protocolVersion !== 'auto' && u.protocolVersion >= '2026-07-28') {
    problems.push(`${at}.protocolVersion: ${u.protocolVersion} needs transport http (the gateway speaks it to ${u.transport} upstreams not yet)`);
  }
}
