/**
 * The whole config, assembled from one module per section: the JSON Schema ajv compiles (what a
 * file may say), the type derived from it, and the checks the schema cannot express.
 *
 * Types come from the schema with json-schema-to-ts: a key with a `default` is required in the
 * type, as it is always there once ajv's `useDefaults` has run, so a type describes a config
 * after loading.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { authChecks, authSchema } from './auth.js';
import { limitsSchema, paginationSchema } from './limits.js';
import { auditSchema, logLevelSchema, logRepeatMsSchema } from './logging.js';
import { reloadSchema } from './reload.js';
import { resumabilitySchema } from './resumability.js';
import { listenSchema, pathSchema, securitySchema, serverChecks, serverSchema, shutdownSchema, sseSchema } from './server.js';
import { redisChecks, sessionsSchema, type SessionsConfig } from './sessions.js';
import { statelessSchema } from './stateless.js';
import { upstreamsChecks, upstreamsSchema, type UpstreamConfig } from './upstreams.js';

export type { AuthConfig } from './auth.js';
export type { LimitsConfig } from './limits.js';
export type { BreakerConfig, HealthConfig, HttpUpstreamConfig, OAuthClientConfig, RetryConfig } from './remote-upstream.js';
export type { ReloadConfig } from './reload.js';
export type { ResumabilityConfig } from './resumability.js';
export type { ServerConfig } from './server.js';
export type { RedisClusterConfig, RedisSentinelConfig, RedisTopologyConfig, SessionsConfig } from './sessions.js';
export type { StatelessConfig } from './stateless.js';
export type { StdioUpstreamConfig } from './stdio-upstream.js';
export type { TlsConfig } from './tls.js';
export type { PoolConfig, UpstreamCommon } from './upstream-common.js';
export type { UpstreamConfig } from './upstreams.js';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    listen: listenSchema,
    server: serverSchema,
    path: pathSchema,
    logLevel: logLevelSchema,
    logRepeatMs: logRepeatMsSchema,
    limits: limitsSchema,
    security: securitySchema,
    sessions: sessionsSchema,
    sse: sseSchema,
    resumability: resumabilitySchema,
    pagination: paginationSchema,
    stateless: statelessSchema,
    auth: authSchema,
    shutdown: shutdownSchema,
    audit: auditSchema,
    reload: reloadSchema,
    upstreams: upstreamsSchema,
  },
  required: ['upstreams'],
} as const;

/**
 * A config after loading. Two sections are narrower than their schema, as their checks make
 * them: `sessions.redis` is one Redis topology, and upstreams carry no null keys.
 */
export interface GatewayConfig extends Omit<FromSchema<typeof configSchema>, 'sessions' | 'upstreams'> {
  sessions: SessionsConfig;
  upstreams: UpstreamConfig[];
}

/**
 * What the schema cannot say (bounds that must come in order, keys that go together, `${VAR}`
 * expansion), section by section. Run on a config the schema rejected too, so one run names
 * every problem: each check is guarded against the shape it was given.
 */
export function configChecks(config: GatewayConfig, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  upstreamsChecks(config.upstreams, env, problems);
  serverChecks(config.server, problems);
  if (typeof config.sessions === 'object' && config.sessions !== null) redisChecks(config.sessions, env, problems);
  if (typeof config.auth === 'object' && config.auth !== null) authChecks(config.auth, env, problems);
  return problems;
}
