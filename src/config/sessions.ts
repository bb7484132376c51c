/** The `sessions` section: where sessions live (memory, or Redis by URL, Sentinel or Cluster), its type, its checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';
import { tlsChecks, tlsSchema } from './tls.js';

// One object for both Sentinel and Cluster, so an error names the key at fault; which keys go
// together is checked in redisChecks.
const redisSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Instead of redisUrl: a master behind Sentinel (sentinels and name) or a Redis Cluster (cluster), exactly one ' +
    'of the two.',
  properties: {
    sentinels: {
      type: 'array',
      minItems: 1,
      description: 'Sentinel: these name the current master (a failover is followed without a restart).',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          host: { type: 'string', minLength: 1, description: "A sentinel's host." },
          port: { type: 'integer', minimum: 1, maximum: 65535, description: 'Its port (26379 by convention).' },
        },
        required: ['host', 'port'],
      },
    },
    name: {
      type: 'string',
      minLength: 1,
      description: 'Sentinel: the master group name the sentinels monitor (required with sentinels).',
    },
    sentinelPassword: {
      type: 'string',
      description: "Sentinel only: the sentinels' password; ${VAR} from the environment.",
    },
    db: { type: 'integer', minimum: 0, description: 'Sentinel only: the database number.' },
    cluster: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$' },
      description:
        'Cluster: some of its nodes as host:port (IPv6 hosts in brackets), e.g. ["10.0.0.1:6379", "10.0.0.2:6379"]; ' +
        'the rest are discovered.',
    },
    password: {
      type: 'string',
      description: "The Redis nodes' password (Sentinel or Cluster); ${VAR} from the environment.",
    },
  },
  required: [],
} as const;

export const sessionsSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Where 2025 sessions live (and with them SSE events, tasks, tokens held for users): see ' +
    'docs/replicas-and-reload.md.',
  properties: {
    store: {
      type: 'string',
      enum: ['memory', 'redis'],
      default: 'memory',
      description: 'memory: this process only; redis: every replica shares sessions (no sticky sessions needed).',
    },
    redisUrl: {
      type: 'string',
      pattern: '^rediss?://',
      description:
        'A single Redis node (redis:// or rediss://), e.g. redis://10.0.0.5:6379/0; required with store redis unless ' +
        'sessions.redis is set. MCPGW_REDIS_URL overrides it.',
    },
    redis: redisSchema,
    keyPrefix: {
      type: 'string',
      pattern: '^[^{}]*$',
      maxLength: 128,
      default: 'mcpgw:',
      description:
        "One key per session: <keyPrefix>{<session id>}:session. No braces: the session id is the key's Cluster " +
        'hash tag.',
    },
    ttlSeconds: {
      type: 'integer',
      minimum: 1,
      default: 3600,
      description:
        'Idle sessions expire after this (404 SESSION_NOT_FOUND). With Redis the TTL is refreshed only when this ' +
        'replica last refreshed it more than a tenth of it ago: a session expires between ttlSeconds and 1.1 x ' +
        'ttlSeconds after its last use, never earlier.',
    },
    cacheMs: {
      type: 'integer',
      minimum: 0,
      maximum: 10000,
      default: 250,
      description:
        'Redis store: a replica serves a session record from its own cache for up to this long. A change or DELETE ' +
        'through any replica is announced on the bus and drops every copy as it arrives (a Cluster relays it ' +
        'between nodes first); if that message is lost a copy is stale for at most cacheMs. Nothing is served from ' +
        'the cache while Redis is unreachable. 0: every request reads Redis.',
    },
    health: {
      type: 'object',
      additionalProperties: false,
      description:
        'Redis store (single node or Sentinel): a timed PING. A frozen Redis keeps its connections open, so their ' +
        'state alone does not show it. A Cluster is watched by its own CLUSTER INFO probe instead.',
      properties: {
        intervalMs: {
          type: 'integer',
          minimum: 100,
          maximum: 600000,
          default: 2000,
          description: 'A PING this often.',
        },
        timeoutMs: {
          type: 'integer',
          minimum: 50,
          maximum: 60000,
          default: 1000,
          description:
            'While the last PING got no reply within this, the store is unready: /readyz 503, lastError NO_PING_REPLY.',
        },
      },
      required: [],
      default: {},
    },
    tls: {
      ...tlsSchema,
      description:
        'With rediss:// (or Sentinel or Cluster over TLS; Sentinel: data nodes and sentinels alike): a private CA, ' +
        'a client certificate; serverName and rejectUnauthorized as for upstreams.',
    },
  },
  required: [],
  default: {},
} as const;

type RedisBlock = FromSchema<typeof redisSchema>;
/** A master found through Redis Sentinel (`sessions.redis`). */
export type RedisSentinelConfig = Required<Pick<RedisBlock, 'sentinels' | 'name'>> &
  Pick<RedisBlock, 'password' | 'sentinelPassword' | 'db'>;
/** A Redis Cluster (`sessions.redis`): some of its nodes; the rest are discovered. */
export type RedisClusterConfig = Required<Pick<RedisBlock, 'cluster'>> & Pick<RedisBlock, 'password'>;
/** Exactly one of the two: the schema allows any mix of keys, redisChecks refuses all but these. */
export type RedisTopologyConfig = RedisSentinelConfig | RedisClusterConfig;

/** The section as loaded: `redis` narrowed to the topologies redisChecks lets through. */
export type SessionsConfig = Omit<FromSchema<typeof sessionsSchema>, 'redis'> & { redis?: RedisTopologyConfig };

/** One Redis topology: `redisUrl` (a single node) or `redis` (Sentinel or Cluster), never both. */
export function redisChecks(sessions: SessionsConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (typeof sessions.tls === 'object' && sessions.tls !== null) {
    tlsChecks(sessions.tls, 'sessions.tls', problems);
    if (sessions.redisUrl?.startsWith('redis://'))
      problems.push('sessions.tls: needs a rediss:// URL (redis:// is plain TCP)');
  }
  const redis = sessions.redis;
  if (typeof redis !== 'object' || redis === null) {
    if (sessions.store === 'redis' && !sessions.redisUrl) {
      problems.push(
        'sessions.redisUrl: is required when sessions.store is "redis" (or set MCPGW_REDIS_URL, or ' +
          'sessions.redis for Sentinel or Cluster)',
      );
    }
    return;
  }
  if (sessions.redisUrl) {
    const from = env.MCPGW_REDIS_URL ? ' (MCPGW_REDIS_URL is set)' : '';
    problems.push(`sessions.redis: cannot be combined with sessions.redisUrl${from}: configure one Redis topology`);
  }
  topologyChecks(redis as RedisBlock, problems);
  // Secrets may stay out of the file: ${VAR} comes from the gateway's environment.
  const secrets = redis as { password?: unknown; sentinelPassword?: unknown };
  if (typeof secrets.password === 'string')
    secrets.password = substituteEnv(secrets.password, 'sessions.redis.password', env, problems);
  if (typeof secrets.sentinelPassword === 'string') {
    secrets.sentinelPassword = substituteEnv(
      secrets.sentinelPassword,
      'sessions.redis.sentinelPassword',
      env,
      problems,
    );
  }
}

/** Sentinel (with its master's name) or Cluster, and only the keys of the one chosen. */
function topologyChecks(redis: RedisBlock, problems: string[]): void {
  const has = (key: keyof RedisBlock) => redis[key] !== undefined;
  if (has('sentinels') && has('cluster')) {
    problems.push('sessions.redis: set either sentinels (with name) or cluster, not both');
  } else if (has('sentinels')) {
    if (!has('name'))
      problems.push('sessions.redis.name: is required with sessions.redis.sentinels (the master group name)');
  } else if (has('cluster')) {
    // A Cluster has one database and no sentinels: these would be silently ignored.
    for (const key of ['name', 'sentinelPassword', 'db'] as const)
      if (has(key)) problems.push(`sessions.redis.${key}: applies to Sentinel only, not to sessions.redis.cluster`);
    for (const [i, node] of (Array.isArray(redis.cluster) ? redis.cluster : []).entries()) {
      const port = typeof node === 'string' ? Number(node.slice(node.lastIndexOf(':') + 1)) : NaN;
      if (port < 1 || port > 65535) problems.push(`sessions.redis.cluster[${i}]: port must be 1-65535`);
    }
  } else {
    problems.push('sessions.redis: needs sentinels (with name) or cluster');
  }
}
