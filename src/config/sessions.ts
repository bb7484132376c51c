/** The `sessions` section: where sessions live (memory, or Redis by URL, Sentinel or Cluster), its type, its checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';
import { tlsChecks, tlsSchema } from './tls.js';

// Sentinel or Cluster instead of redisUrl. One object for both, so an error names the key at
// fault; which keys go together is checked in redisChecks.
const redisSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sentinels: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { host: { type: 'string', minLength: 1 }, port: { type: 'integer', minimum: 1, maximum: 65535 } },
        required: ['host', 'port'],
      },
    },
    // The master group name the sentinels monitor.
    name: { type: 'string', minLength: 1 },
    sentinelPassword: { type: 'string' },
    db: { type: 'integer', minimum: 0 },
    // Some of the Cluster's nodes as host:port (IPv6 hosts in brackets); the rest are discovered.
    cluster: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$' } },
    password: { type: 'string' },
  },
  required: [],
} as const;

export const sessionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    store: { type: 'string', enum: ['memory', 'redis'], default: 'memory' },
    // A single node; sessions.redis is for Sentinel or Cluster.
    redisUrl: { type: 'string', pattern: '^rediss?://' },
    redis: redisSchema,
    // No "{" or "}": the session id is the key's Cluster hash tag.
    keyPrefix: { type: 'string', pattern: '^[^{}]*$', maxLength: 128, default: 'mcpgw:' },
    ttlSeconds: { type: 'integer', minimum: 1, default: 3600 },
    // Redis store: how long a replica may serve a session record from its own cache
    // (0: every request reads Redis). Changes are announced to every replica; see
    // session/cached-store.ts for what a lost announcement costs.
    cacheMs: { type: 'integer', minimum: 0, maximum: 10000, default: 250 },
    // Redis store: a timed PING; /readyz is 503 while the last one went unanswered (a frozen
    // Redis keeps its connections open, so their state alone does not show it).
    health: {
      type: 'object',
      additionalProperties: false,
      properties: {
        intervalMs: { type: 'integer', minimum: 100, maximum: 600000, default: 2000 },
        timeoutMs: { type: 'integer', minimum: 50, maximum: 60000, default: 1000 },
      },
      required: [],
      default: {},
    },
    // For rediss:// (and Sentinel or Cluster over TLS): a private CA, a client certificate.
    tls: tlsSchema,
  },
  required: [],
  default: {},
} as const;

type RedisBlock = FromSchema<typeof redisSchema>;
/** A master found through Redis Sentinel (`sessions.redis`). */
export type RedisSentinelConfig = Required<Pick<RedisBlock, 'sentinels' | 'name'>> & Pick<RedisBlock, 'password' | 'sentinelPassword' | 'db'>;
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
    if (sessions.redisUrl?.startsWith('redis://')) problems.push('sessions.tls: needs a rediss:// URL (redis:// is plain TCP)');
  }
  const redis = sessions.redis;
  if (typeof redis !== 'object' || redis === null) {
    if (sessions.store === 'redis' && !sessions.redisUrl) {
      problems.push('sessions.redisUrl: is required when sessions.store is "redis" (or set MCPGW_REDIS_URL, or sessions.redis for Sentinel or Cluster)');
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
  if (typeof secrets.password === 'string') secrets.password = substituteEnv(secrets.password, 'sessions.redis.password', env, problems);
  if (typeof secrets.sentinelPassword === 'string') {
    secrets.sentinelPassword = substituteEnv(secrets.sentinelPassword, 'sessions.redis.sentinelPassword', env, problems);
  }
}

/** Sentinel (with its master's name) or Cluster, and only the keys of the one chosen. */
function topologyChecks(redis: RedisBlock, problems: string[]): void {
  const has = (key: keyof RedisBlock) => redis[key] !== undefined;
  if (has('sentinels') && has('cluster')) {
    problems.push('sessions.redis: set either sentinels (with name) or cluster, not both');
  } else if (has('sentinels')) {
    if (!has('name')) problems.push('sessions.redis.name: is required with sessions.redis.sentinels (the master group name)');
  } else if (has('cluster')) {
    // A Cluster has one database and no sentinels: these would be silently ignored.
    for (const key of ['name', 'sentinelPassword', 'db'] as const) if (has(key)) problems.push(`sessions.redis.${key}: applies to Sentinel only, not to sessions.redis.cluster`);
    for (const [i, node] of (Array.isArray(redis.cluster) ? redis.cluster : []).entries()) {
      const port = typeof node === 'string' ? Number(node.slice(node.lastIndexOf(':') + 1)) : NaN;
      if (port < 1 || port > 65535) problems.push(`sessions.redis.cluster[${i}]: port must be 1-65535`);
    }
  } else {
    problems.push('sessions.redis: needs sentinels (with name) or cluster');
  }
}
