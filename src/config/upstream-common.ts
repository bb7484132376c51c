/** What every upstream has, whatever its transport: the keys' schema (the pool's too) and their checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { upstreamTasksSchema } from './tasks.js';
import { upstreamPinningSchema } from './pinning.js';
import { interceptorsSchema } from './interceptors.js';

export const poolSchema = {
  type: 'object',
  additionalProperties: false,
  description: "The upstream's workers (processes, or upstream sessions): see docs/upstreams.md.",
  properties: {
    min: {
      type: 'integer',
      minimum: 0,
      default: 1,
      description: 'Shared mode: workers started with the gateway and kept; more start when every worker is busy.',
    },
    spares: {
      type: 'integer',
      minimum: 0,
      maximum: 16,
      default: 1,
      description:
        'Per-session stdio: processes started ahead, each initialized by the next session (or stateless request) ' +
        'that takes one, so it waits only for initialize, not for a process start; 0: none.',
    },
    max: {
      type: 'integer',
      minimum: 1,
      default: 4,
      description:
        'Shared: the most workers. Per-session: the most workers at once; at the cap the least recently used idle ' +
        'one is stopped to make room, else OVERLOADED.',
    },
    maxInFlight: {
      type: 'integer',
      minimum: 1,
      default: 32,
      description: "Calls in flight per worker (per-session: one session's calls); a full worker is busy.",
    },
    maxInFlightBytes: {
      type: 'integer',
      minimum: 0,
      default: 2097152,
      description:
        'Shared mode: a worker whose unanswered requests weigh this much (characters of JSON) is busy: calls go to ' +
        'another worker, wait in the queue (which takes turns between clients) or one starts, up to max. A stdio ' +
        'worker reads its calls in order, so small calls go to one not busy with large ones. 0: no bound by weight; ' +
        'one larger call still runs, alone on its worker.',
    },
    heavyRequestBytes: {
      type: 'integer',
      minimum: 0,
      default: 262144,
      description:
        'Shared mode: a worker whose unanswered requests weigh this much (characters of JSON) is heavy: a stdio ' +
        'server reads in order, so calls go to a worker that is not, and one starts (up to max) when every worker ' +
        'is heavy; a heavy worker still takes calls when no other can. 0: off (only maxInFlightBytes weighs).',
    },
    queueSize: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description: 'Shared: calls that wait when every worker is busy; past it OVERLOADED at once, with retryAfterMs.',
    },
    queueTimeoutMs: {
      type: 'integer',
      minimum: 1,
      default: 5000,
      description: 'Shared: the longest a call waits in that queue; then OVERLOADED.',
    },
    busyAfterMs: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description:
        'Shared: a worker with calls waiting on it that has answered none for this long counts as busy, as a full ' +
        'one does (another starts, up to max): a stdio server answers in order, so one slow or large call holds up ' +
        'every call behind it. 0: only maxInFlight makes a worker busy.',
    },
    idleTimeoutMs: {
      type: 'integer',
      minimum: 1000,
      default: 300000,
      description: 'Workers above min (per-session: any worker) stop after this long idle.',
    },
  },
  required: [],
} as const;

export type PoolConfig = FromSchema<typeof poolSchema>;

/** `upstreams[].fairness`: each principal's share of the upstream's calls on one replica (gateway/fair-shares.ts). */
export const fairnessSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    "Each principal's share of this upstream's calls on one replica (API key name, token subject, else client " +
    'address: who rate limits count): past maxInFlightPerPrincipal its calls wait, served in turns between ' +
    'principals, so one principal cannot hold every slot; past `queue` waiting, FAIRNESS_QUEUE_FULL (-32015, 429 ' +
    "with Retry-After as a POST's only message). Unset: no share, only the pool bounds calls. Per replica. Applies " +
    'on reload to new calls.',
  properties: {
    maxInFlightPerPrincipal: {
      type: 'integer',
      minimum: 1,
      description: "One principal's calls in flight on this upstream (this replica); the next ones wait.",
    },
    queue: {
      type: 'integer',
      minimum: 0,
      default: 32,
      description:
        'Per principal: its calls that wait for a place of its share; past it FAIRNESS_QUEUE_FULL at once. 0: no wait.',
    },
  },
  required: ['maxInFlightPerPrincipal'],
} as const;

export type FairnessConfig = FromSchema<typeof fairnessSchema>;

/** Spread into each transport's schema, so each one names every key it accepts. */
export const commonUpstreamProperties = {
  name: {
    type: 'string',
    pattern: '^[a-z0-9-]+$',
    maxLength: 64,
    description: 'Unique; names the upstream in logs, metrics, errors (data.upstream) and /status.',
  },
  mode: {
    type: 'string',
    enum: ['shared', 'per-session'],
    default: 'shared',
    description:
      'shared: one pool of workers serves every client session, initialized by the gateway with no client ' +
      "capabilities. per-session: each client session gets its own worker, initialized with that client's " +
      "capabilities, so the upstream can ask it for sampling, elicitation or roots. A remote upstream's worker is " +
      'one upstream session (its Mcp-Session-Id).',
  },
  pool: { ...poolSchema, default: {} },
  fairness: fairnessSchema,
  interceptors: {
    ...interceptorsSchema,
    description:
      "Guardrails for this upstream's calls and asks only: on the way to it after the top level's and the " +
      "endpoint's, on the way back before them (docs/guardrails.md). A change applies at once, workers kept.",
  },
  timeoutMs: {
    type: 'integer',
    minimum: 1,
    default: 60000,
    description:
      'Per request: no answer (remote: no byte of the reply) within this, and the call fails with UPSTREAM_TIMEOUT ' +
      'and is cancelled upstream; each progress notification restarts it, up to maxTimeoutMs.',
  },
  maxTimeoutMs: {
    type: 'integer',
    minimum: 1,
    default: 600000,
    description: "A call's hard limit, whatever progress it makes.",
  },
  prefix: {
    type: 'string',
    pattern: '^[A-Za-z0-9_-]*$',
    maxLength: 64,
    nullable: true,
    description:
      'Tools and prompts appear as <prefix>__<name>; "" exposes them unchanged. Default: the name. A key with no ' +
      'value (null) counts as not set.',
  },
  required: {
    type: 'boolean',
    default: false,
    description: 'true: /readyz is 503 while this upstream is down (otherwise only while it is still starting).',
  },
  protocolVersion: {
    type: 'string',
    enum: ['auto', '2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
    default: 'auto',
    description:
      'The revision the gateway speaks to it. auto (http only; stdio and sse speak 2025) learns it: ' +
      'server/discover first (2026-07-28, refreshed as its ttlMs says), else initialize, logged; /readyz shows the ' +
      'era learned. A pinned revision is spoken without a try of the other era (2026-07-28: http only).',
  },
  validateArguments: {
    type: 'boolean',
    default: true,
    description:
      "tools/call arguments are checked against the tool's inputSchema before they reach the upstream (ajv: " +
      "draft-07 when its $schema says so, else 2020-12, MCP's default); invalid ones get INVALID_PARAMS. A schema " +
      "ajv cannot compile (or over 64 KiB of JSON) leaves that tool's calls unchecked, with one warning naming the " +
      'tool. Patterns run in RE2 (linear time): one RE2 cannot compile (lookahead, backreference) or too large ' +
      "refuses that tool's calls (INVALID_PARAMS naming the pattern, one warning); its other tools are checked as " +
      'ever. false: for a server whose schemas say less than it accepts.',
  },
  resources: {
    type: 'object',
    additionalProperties: false,
    description: "How this upstream's resources are offered.",
    properties: {
      uris: {
        type: 'string',
        enum: ['as-is', 'prefixed'],
        default: 'as-is',
        description:
          'prefixed: its resource URIs and templates are offered as <prefix>+<uri> (a ui:// one, an MCP App, as ' +
          "ui://<prefix>+<rest>, as its tools' _meta name it), so two copies of one server can sit side by side " +
          '(see docs/virtual-servers.md); as-is: unchanged.',
      },
    },
    required: [],
  },
  tools: {
    type: 'object',
    additionalProperties: false,
    description:
      "Which of the upstream's tools the gateway offers, by their own names (* matches any run of characters); the " +
      'rest are neither listed nor callable.',
    properties: {
      allow: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description: 'Only these (default: every tool not denied), e.g. ["read_*", "search"].',
      },
      deny: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        description: 'Never these; deny wins over allow, e.g. ["*_admin"].',
      },
    },
    required: [],
  },
  tasks: upstreamTasksSchema,
  pinning: upstreamPinningSchema,
} as const;

/**
 * A derived upstream type with `keys` no longer nullable: the schema accepts null there (a YAML
 * key with no value), and dropNullKeys removes such a key before the config is handed on.
 */
export type WithoutNull<T, K extends keyof T> = Omit<T, K> & { [P in K]?: Exclude<T[P], null> };

/** What every upstream has, whatever its transport. */
export type UpstreamCommon = WithoutNull<
  FromSchema<{
    type: 'object';
    additionalProperties: false;
    properties: typeof commonUpstreamProperties;
    required: ['name'];
  }>,
  'prefix'
>;

/**
 * A null key means "not set", as its absence does (`prefix ?? name`; spawn's cwd): the key goes, so the types need no
 * null.
 */
export function dropNullKeys(u: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of keys) if (u[key] === null) delete u[key];
}

/** Bounds that must come in order. */
export function commonUpstreamChecks(u: UpstreamCommon, at: string, problems: string[]): void {
  if (u.pool?.min > u.pool?.max) problems.push(`${at}.pool.min: must be <= pool.max (${u.pool.max})`);
  if (u.timeoutMs > u.maxTimeoutMs) problems.push(`${at}.timeoutMs: must be <= maxTimeoutMs (${u.maxTimeoutMs})`);
  if (u.resources?.uris === 'prefixed' && (u.prefix ?? u.name) === '')
    problems.push(`${at}.resources.uris: "prefixed" needs a prefix that is not empty (prefix: "")`);
}

/** Whether an upstream's `protocolVersion` lets the gateway speak 2026-07-28 to it (try it, for `auto`). */
export function speaksStateless(u: { transport: string; protocolVersion?: string }): 'no' | 'try' | 'only' {
  if (u.transport !== 'http') return 'no';
  if (u.protocolVersion === undefined || u.protocolVersion === 'auto') return 'try';
  return u.protocolVersion >= '2026-07-28' ? 'only' : 'no';
}

/** A pinned 2026-07-28 upstream must be reachable over Streamable HTTP, the one wire that revision has here. */
export function protocolVersionChecks(
  u: { transport: string; protocolVersion?: string },
  at: string,
  problems: string[],
): void {
  if (
    u.transport !== 'http' &&
    typeof u.protocolVersion === 'string' &&
    u.protocolVersion !== 'auto' &&
    u.protocolVersion >= '2026-07-28'
  ) {
    problems.push(
      `${at}.protocolVersion: ${u.protocolVersion} needs transport http (the gateway speaks it to ${u.transport} ` +
        `upstreams not yet)`,
    );
  }
}
