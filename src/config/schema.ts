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
import { clusterChecks, clusterSchema } from './cluster.js';
import { identityChecks } from './identity.js';
import { limitsSchema, paginationSchema } from './limits.js';
import { pinningChecks, pinningSchema } from './pinning.js';
import { authorizationSchema } from './authorization.js';
import { auditSchema, logLevelSchema, logRepeatMsSchema } from './logging.js';
import { rateLimitsChecks, rateLimitsSchema } from './rate-limits.js';
import { quotasChecks, quotasSchema } from './quotas.js';
import { reloadSchema } from './reload.js';
import { resumabilitySchema } from './resumability.js';
import { secretsChecks, secretsSchema } from './secrets.js';
import {
  legacySseSchema,
  listenSchema,
  pathSchema,
  securitySchema,
  serverChecks,
  serverSchema,
  shutdownSchema,
  sseSchema,
  websocketSchema,
} from './server.js';
import { redisChecks, sessionsSchema, type SessionsConfig } from './sessions.js';
import { serverCardsChecks, serverCardsSchema } from './server-cards.js';
import { cacheSchema } from './cache.js';
import { serversChecks, serversSchema } from './servers.js';
import { statelessChecks, statelessSchema } from './stateless.js';
import { statusSchema } from './status.js';
import { tasksChecks, tasksSchema } from './tasks.js';
import { interceptorsSchema } from './interceptors.js';
import { interceptorsChecks } from './interceptor-servers.js';
import { toolSearchSchema } from './tool-search.js';
import { upstreamsChecks, upstreamsSchema, type UpstreamConfig } from './upstreams.js';

export type { AuthConfig } from './auth.js';
export type { ClusterConfig } from './cluster.js';
export type { LimitsConfig } from './limits.js';
export type { PinMode, PinningConfig } from './pinning.js';
export type { AuthorizationConfig } from './authorization.js';
export type {
  BreakerConfig,
  HealthConfig,
  HttpUpstreamConfig,
  OAuthClientConfig,
  RetryConfig,
} from './remote-upstream.js';
export type { RateLimitKey, RateLimitRuleConfig, RateLimitsConfig } from './rate-limits.js';
export type { QuotaRuleConfig, QuotasConfig, QuotaWindow } from './quotas.js';
export type { ReloadConfig } from './reload.js';
export type { ResumabilityConfig } from './resumability.js';
export type { SecretKey, SecretsConfig } from './secrets.js';
export type { LegacySseSettings, ServerConfig, WebSocketSettings } from './server.js';
export type { ServerCardConfig, ServerCardsConfig } from './server-cards.js';
export type { CacheConfig } from './cache.js';
export type { ServerEntryConfig, ToolOverrideConfig } from './servers.js';
export type { RedisClusterConfig, RedisSentinelConfig, RedisTopologyConfig, SessionsConfig } from './sessions.js';
export type { StatelessConfig } from './stateless.js';
export type { StatusConfig } from './status.js';
export type { TasksConfig, UpstreamTasksConfig } from './tasks.js';
export type { StdioUpstreamConfig } from './stdio-upstream.js';
export type { TlsConfig } from './tls.js';
export type { ToolSearchConfig } from './tool-search.js';
export type { InterceptorConfig } from './interceptors.js';
export type { FairnessConfig, PoolConfig, UpstreamCommon } from './upstream-common.js';
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
    legacySse: legacySseSchema,
    websocket: websocketSchema,
    resumability: resumabilitySchema,
    pagination: paginationSchema,
    stateless: statelessSchema,
    auth: authSchema,
    shutdown: shutdownSchema,
    cluster: clusterSchema,
    audit: auditSchema,
    status: statusSchema,
    secrets: secretsSchema,
    reload: reloadSchema,
    tasks: tasksSchema,
    rateLimits: rateLimitsSchema,
    pinning: pinningSchema,
    authorization: authorizationSchema,
    quotas: quotasSchema,
    upstreams: upstreamsSchema,
    servers: serversSchema,
    serverCards: serverCardsSchema,
    cache: cacheSchema,
    toolSearch: toolSearchSchema,
    interceptors: interceptorsSchema,
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
  if (typeof config.stateless === 'object' && config.stateless !== null)
    statelessChecks(config.stateless, env, problems);
  if (typeof config.secrets === 'object' && config.secrets !== null) secretsChecks(config.secrets, env, problems);
  if (typeof config.tasks === 'object' && config.tasks !== null) tasksChecks(config.tasks, problems);
  if (typeof config.rateLimits === 'object' && config.rateLimits !== null)
    rateLimitsChecks(config.rateLimits, problems);
  if (typeof config.quotas === 'object' && config.quotas !== null) quotasChecks(config.quotas, problems);
  clusterChecks(
    config.cluster,
    typeof config.sessions === 'object' && config.sessions !== null ? config.sessions.store : undefined,
    problems,
  );
  identityChecks(config, problems);
  interceptorsChecks(config.interceptors, 'interceptors', problems, env);
  if (Array.isArray(config.servers))
    config.servers.forEach((s, i) => interceptorsChecks(s?.interceptors, `servers[${i}].interceptors`, problems, env));
  if (Array.isArray(config.upstreams))
    config.upstreams.forEach((u, i) =>
      interceptorsChecks(u?.interceptors, `upstreams[${i}].interceptors`, problems, env),
    );
  pinningChecks(config.pinning, config.upstreams, problems);
  serversChecks(
    config.servers,
    config.path,
    typeof config.auth === 'object' && config.auth !== null ? config.auth.mode : undefined,
    problems,
  );
  serverCardsChecks(config.serverCards, config.path, config.servers, problems);
  return problems;
}
