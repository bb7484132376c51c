import type { SchemaObject } from 'ajv';

// The interfaces describe a config after defaults are applied; the schema is what a file may say.

export interface PoolConfig {
  min: number;
  /** mode per-session, stdio: processes started ahead of the sessions (or stateless requests) that will use them. */
  spares: number;
  max: number;
  maxInFlight: number;
  queueSize: number;
  queueTimeoutMs: number;
  idleTimeoutMs: number;
}

/** What every upstream has, whatever its transport. */
export interface UpstreamCommon {
  name: string;
  mode: 'shared' | 'per-session';
  pool: PoolConfig;
  timeoutMs: number;
  maxTimeoutMs: number;
  prefix?: string;
  /** /readyz fails while this upstream is down (default: only while it is still starting). */
  required: boolean;
  /** Which of the upstream's tools the gateway offers, by their own names (`*` matches any run of characters). */
  tools?: { allow?: string[]; deny?: string[] };
  /** tools/call arguments are checked against the tool's inputSchema before they reach the upstream. */
  validateArguments: boolean;
}

export interface StdioUpstreamConfig extends UpstreamCommon {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** Retries of one HTTP exchange (see upstream/retry-policy.ts for which ones). */
export interface RetryConfig {
  /** Tries after the first one; 0 turns retries off. */
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export interface BreakerConfig {
  /** Consecutive failed exchanges that open the circuit. */
  failureThreshold: number;
  /** How long the circuit stays open before a probe; doubles (jittered) per failed probe… */
  openMs: number;
  /** …up to this. */
  maxOpenMs: number;
}

export interface HealthConfig {
  /** Time between pings while the upstream is up; 0 turns pings off. */
  intervalMs: number;
  timeoutMs: number;
}

/** A remote MCP server: Streamable HTTP (`http`) or the 2024-11-05 HTTP+SSE transport (`sse`). */
export interface HttpUpstreamConfig extends UpstreamCommon {
  transport: 'http' | 'sse';
  /** The MCP endpoint (`http`), or the SSE endpoint to GET (`sse`). */
  url: string;
  /** Sent with every request to the upstream (credentials of the gateway's own, never a client's). */
  headers: Record<string, string>;
  /** The gateway's own OAuth client for this upstream: a bearer token by the client credentials grant. */
  oauth?: OAuthClientConfig;
  connectTimeoutMs: number;
  /** For https URLs: a private CA, a client certificate (mTLS), the name to verify. */
  tls?: TlsConfig;
  retry: RetryConfig;
  breaker: BreakerConfig;
  health: HealthConfig;
}

export interface OAuthClientConfig {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** RFC 8707 resource indicator: the upstream's MCP endpoint as its authorization server names it. */
  resource?: string;
}

/** TLS towards a server the gateway connects to (an upstream, Redis). */
export interface TlsConfig {
  /** PEM file of the CA(s) that sign the server's certificate (instead of the system's). */
  caFile?: string;
  /** PEM files of the gateway's client certificate and its key, for servers that require one. */
  certFile?: string;
  keyFile?: string;
  /** The name the server's certificate must carry, when it differs from the host connected to. */
  serverName?: string;
  /** false accepts any certificate: for a test bench, never for production. */
  rejectUnauthorized: boolean;
}

export type UpstreamConfig = StdioUpstreamConfig | HttpUpstreamConfig;

/** A master found through Redis Sentinel (`sessions.redis`). */
export interface RedisSentinelConfig {
  sentinels: Array<{ host: string; port: number }>;
  /** The master group name the sentinels monitor. */
  name: string;
  password?: string;
  sentinelPassword?: string;
  db?: number;
}

/** A Redis Cluster (`sessions.redis`): some of its nodes as `host:port`; the rest are discovered. */
export interface RedisClusterConfig {
  cluster: string[];
  password?: string;
}

/** Exactly one of the two (checked in load.ts, which names the keys); a single node is `sessions.redisUrl`. */
export type RedisTopologyConfig = RedisSentinelConfig | RedisClusterConfig;

export interface AuthConfig {
  /** jwt: tokens verified with the issuer's keys; introspection: opaque tokens checked with the authorization server (RFC 7662). */
  mode: 'none' | 'jwt' | 'introspection';
  /** The gateway's MCP endpoint as clients name it (RFC 8707 resource, RFC 9728 metadata). */
  resource?: string;
  /** Issuers clients get tokens from, listed in the protected resource metadata. */
  authorizationServers: string[];
  /** The `iss` a token must carry (introspection: when the answer names one). */
  issuer?: string;
  /** Where the issuer publishes its signing keys (jwt). */
  jwksUrl?: string;
  /** How to ask the authorization server about a token (introspection). */
  introspection?: { url: string; clientId: string; clientSecret: string; cacheSeconds: number; timeoutMs: number };
  /** The `aud` a token must carry (default: `resource`). */
  audience?: string;
  /** Scopes every request's token must carry. */
  requiredScopes: string[];
  /** Scopes a tools/call must carry besides, by the tool's name as clients see it (`*` globs). */
  toolScopes: Array<{ tools: string[]; scopes: string[] }>;
  clockToleranceSeconds: number;
}

/** Bounds of the HTTP server itself; a reply already being written (an SSE stream) is not affected. */
export interface ServerConfig {
  /** From connecting (or starting the next request of a keep-alive connection) to the end of the request headers. */
  headersTimeoutMs: number;
  /** From the same start to the end of the request body. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection between two requests. */
  keepAliveTimeoutMs: number;
  /** Open connections on this replica (SSE streams included); the next ones are closed at once. */
  maxConnections: number;
}

export interface GatewayConfig {
  listen: { host: string; port: number; backlog: number };
  /** The HTTP server's own bounds on connections (slow or idle sockets, how many at once). */
  server: ServerConfig;
  path: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** A repeated upstream failure is logged the first time, then at most once per this many ms, with a count. */
  logRepeatMs: number;
  limits: {
    bodyBytes: number;
    maxJsonDepth: number;
    maxBatchSize: number;
    maxInFlightPerClient: number;
    maxSessions: number;
    maxSessionsPerPrincipal: number;
    sessionEvictionIdleSeconds: number;
    maxStreams: number;
  };
  security: { allowedOrigins: string[] };
  sessions: { store: 'memory' | 'redis'; redisUrl?: string; redis?: RedisTopologyConfig; tls?: TlsConfig; keyPrefix: string; ttlSeconds: number; cacheMs: number; health: { intervalMs: number; timeoutMs: number } };
  sse: { keepAliveMs: number };
  /** Recorded SSE events, for clients that resume a stream (GET with Last-Event-ID). */
  resumability: { maxEvents: number; maxAgeSeconds: number; retryMs: number };
  pagination: { pageSize: number };
  /** Cache hints on 2026-07-28 (stateless) results: how long a client may reuse them. */
  stateless: { listTtlMs: number; readTtlMs: number; inputTimeoutMs: number };
  /** Who may call: `none`, or OAuth 2.1 bearer tokens (JWTs) checked against the issuer's keys. */
  auth: AuthConfig;
  shutdown: { drainMs: number };
  /** Requests of these methods get one audit log line each (none by default). */
  audit: { methods: string[] };
  upstreams: UpstreamConfig[];
}

const pool: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    min: { type: 'integer', minimum: 0, default: 1 },
    spares: { type: 'integer', minimum: 0, maximum: 16, default: 1 },
    max: { type: 'integer', minimum: 1, default: 4 },
    maxInFlight: { type: 'integer', minimum: 1, default: 32 },
    queueSize: { type: 'integer', minimum: 0, default: 1000 },
    queueTimeoutMs: { type: 'integer', minimum: 1, default: 5000 },
    idleTimeoutMs: { type: 'integer', minimum: 1000, default: 300000 },
  },
  required: [],
};

const tls: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    caFile: { type: 'string', minLength: 1 },
    certFile: { type: 'string', minLength: 1 },
    keyFile: { type: 'string', minLength: 1 },
    serverName: { type: 'string', minLength: 1 },
    rejectUnauthorized: { type: 'boolean', default: true },
  },
  required: [],
};

const commonUpstreamProperties = {
  name: { type: 'string', pattern: '^[a-z0-9-]+$', maxLength: 64 },
  mode: { type: 'string', enum: ['shared', 'per-session'], default: 'shared' },
  pool: { ...pool, default: {} },
  timeoutMs: { type: 'integer', minimum: 1, default: 60000 },
  maxTimeoutMs: { type: 'integer', minimum: 1, default: 600000 },
  prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]*$', maxLength: 64, nullable: true },
  required: { type: 'boolean', default: false },
  validateArguments: { type: 'boolean', default: true },
  tools: {
    type: 'object',
    additionalProperties: false,
    properties: {
      allow: { type: 'array', items: { type: 'string', minLength: 1 } },
      deny: { type: 'array', items: { type: 'string', minLength: 1 } },
    },
    required: [],
  },
};

const stdioUpstream: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonUpstreamProperties,
    transport: { type: 'string', const: 'stdio' },
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' }, default: [] },
    env: { type: 'object', additionalProperties: { type: 'string' }, required: [], default: {} },
    cwd: { type: 'string', nullable: true },
  },
  required: ['name', 'transport', 'command'],
};

/** The gateway as an OAuth client (towards an upstream's authorization server, or the one that introspects tokens). */
const oauthClientCredentials = {
  clientId: { type: 'string', minLength: 1 },
  // ${VAR} is expanded from the environment: keep the secret out of the file.
  clientSecret: { type: 'string', minLength: 1 },
};

const httpUpstream: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonUpstreamProperties,
    transport: { type: 'string', enum: ['http', 'sse'] },
    // http(s), or a ${VAR} that must expand to one (checked after substitution).
    url: { type: 'string', pattern: '^(https?://|\\$\\{)' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, required: [], default: {} },
    oauth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        tokenUrl: { type: 'string', pattern: '^(https?://|\\$\\{)' },
        ...oauthClientCredentials,
        scopes: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
        resource: { type: 'string', pattern: '^https?://' },
      },
      required: ['tokenUrl', 'clientId', 'clientSecret'],
    },
    connectTimeoutMs: { type: 'integer', minimum: 1, default: 10000 },
    tls,
    retry: {
      type: 'object',
      additionalProperties: false,
      properties: {
        attempts: { type: 'integer', minimum: 0, maximum: 10, default: 2 },
        initialDelayMs: { type: 'integer', minimum: 1, default: 100 },
        maxDelayMs: { type: 'integer', minimum: 1, default: 2000 },
      },
      required: [],
      default: {},
    },
    breaker: {
      type: 'object',
      additionalProperties: false,
      properties: {
        failureThreshold: { type: 'integer', minimum: 1, default: 5 },
        openMs: { type: 'integer', minimum: 1, default: 5000 },
        maxOpenMs: { type: 'integer', minimum: 1, default: 60000 },
      },
      required: [],
      default: {},
    },
    health: {
      type: 'object',
      additionalProperties: false,
      properties: {
        intervalMs: { type: 'integer', minimum: 0, default: 30000 },
        timeoutMs: { type: 'integer', minimum: 1, default: 5000 },
      },
      required: [],
      default: {},
    },
  },
  required: ['name', 'transport', 'url'],
};

export const configSchema: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    listen: {
      type: 'object',
      additionalProperties: false,
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
        // Node's default (511) overflows under a burst of new connections; the kernel caps it at somaxconn.
        backlog: { type: 'integer', minimum: 1, maximum: 65535, default: 4096 },
      },
      required: [],
      default: {},
    },
    server: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // A socket that sent nothing, or half a request line, is closed this long after it connected.
        headersTimeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 10000 },
        // Headers then no body (or a trickle): closed this long after the request began.
        requestTimeoutMs: { type: 'integer', minimum: 100, maximum: 3600000, default: 30000 },
        keepAliveTimeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 5000 },
        // Lowered at start-up when the process's open-file limit could not hold this many.
        maxConnections: { type: 'integer', minimum: 1, default: 10000 },
      },
      required: [],
      default: {},
    },
    path: { type: 'string', pattern: '^/', default: '/mcp' },
    logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    logRepeatMs: { type: 'integer', minimum: 100, default: 60000 },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        bodyBytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024 },
        // MCP messages nest a few levels; thousands make recursive consumers overflow their stack.
        maxJsonDepth: { type: 'integer', minimum: 8, maximum: 1000, default: 64 },
        // Batches exist only in 2025-03-26 sessions.
        maxBatchSize: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
        // Per session, or per principal of stateless requests; on each replica. 0: no limit.
        maxInFlightPerClient: { type: 'integer', minimum: 0, default: 64 },
        // Memory store: per replica; Redis: across all replicas. A session is ~300 B in memory.
        maxSessions: { type: 'integer', minimum: 1, default: 100_000 },
        // With auth on; 0: no limit.
        maxSessionsPerPrincipal: { type: 'integer', minimum: 0, default: 1000 },
        // At a limit, the least recently used session makes room if it was idle this long.
        sessionEvictionIdleSeconds: { type: 'integer', minimum: 0, default: 60 },
        // Long-lived SSE streams (GET, resumed, listen) per replica.
        maxStreams: { type: 'integer', minimum: 1, default: 10_000 },
      },
      required: [],
      default: {},
    },
    security: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // Exact origins ("https://app.example.com"). Localhost origins on any port are always allowed.
        allowedOrigins: { type: 'array', items: { type: 'string' }, default: [] },
      },
      required: [],
      default: {},
    },
    sessions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        store: { type: 'string', enum: ['memory', 'redis'], default: 'memory' },
        redisUrl: { type: 'string', pattern: '^rediss?://' },
        // Sentinel or Cluster instead of redisUrl. One object for both, so an error names the key
        // at fault; which keys go together is checked in load.ts.
        redis: {
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
            name: { type: 'string', minLength: 1 },
            sentinelPassword: { type: 'string' },
            db: { type: 'integer', minimum: 0 },
            // host:port, IPv6 hosts in brackets.
            cluster: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$' } },
            password: { type: 'string' },
          },
          required: [],
        },
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
        tls,
      },
      required: [],
      default: {},
    },
    sse: {
      type: 'object',
      additionalProperties: false,
      properties: { keepAliveMs: { type: 'integer', minimum: 1000, default: 15000 } },
      required: [],
      default: {},
    },
    resumability: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // Per stream: the oldest events go first (Redis trims approximately: MAXLEN ~).
        maxEvents: { type: 'integer', minimum: 1, maximum: 1000000, default: 1000 },
        // Events older than this are dropped, and a stream unused this long is dropped whole.
        maxAgeSeconds: { type: 'integer', minimum: 1, default: 300 },
        // Sent as the SSE `retry` field with each 2025-11-25 priming event.
        retryMs: { type: 'integer', minimum: 0, maximum: 600000, default: 1000 },
      },
      required: [],
      default: {},
    },
    pagination: {
      type: 'object',
      additionalProperties: false,
      properties: { pageSize: { type: 'integer', minimum: 1, maximum: 10000, default: 500 } },
      required: [],
      default: {},
    },
    stateless: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // server/discover and the four lists: the catalog changes only when an upstream's does
        // (listen streams hear of it at once); 0 asks clients not to cache.
        listTtlMs: { type: 'integer', minimum: 0, maximum: 86400000, default: 60000 },
        // resources/read: the gateway cannot know how fresh an upstream's resource is.
        readTtlMs: { type: 'integer', minimum: 0, maximum: 86400000, default: 0 },
        // After an input-required result: how long the upstream call waits for the client's retry.
        inputTimeoutMs: { type: 'integer', minimum: 1000, maximum: 86400000, default: 300000 },
      },
      required: [],
      default: {},
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { type: 'string', enum: ['none', 'jwt', 'introspection'], default: 'none' },
        resource: { type: 'string', pattern: '^https?://' },
        authorizationServers: { type: 'array', items: { type: 'string', pattern: '^https?://' }, default: [] },
        issuer: { type: 'string', minLength: 1 },
        jwksUrl: { type: 'string', pattern: '^https?://' },
        introspection: {
          type: 'object',
          additionalProperties: false,
          properties: {
            url: { type: 'string', pattern: '^(https?://|\\$\\{)' },
            ...oauthClientCredentials,
            cacheSeconds: { type: 'integer', minimum: 0, maximum: 3600, default: 60 },
            timeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 5000 },
          },
          required: ['url', 'clientId', 'clientSecret'],
        },
        audience: { type: 'string', minLength: 1 },
        requiredScopes: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
        toolScopes: {
          type: 'array',
          default: [],
          items: {
            type: 'object',
            additionalProperties: false,
            properties: {
              tools: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
              scopes: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
            },
            required: ['tools', 'scopes'],
          },
        },
        clockToleranceSeconds: { type: 'integer', minimum: 0, maximum: 600, default: 30 },
      },
      required: [],
      default: {},
    },
    shutdown: {
      type: 'object',
      additionalProperties: false,
      properties: { drainMs: { type: 'integer', minimum: 0, default: 10000 } },
      required: [],
      default: {},
    },
    audit: {
      type: 'object',
      additionalProperties: false,
      properties: {
        methods: {
          type: 'array',
          uniqueItems: true,
          items: { type: 'string', enum: ['tools/call', 'prompts/get', 'resources/read', 'resources/subscribe', 'completion/complete', 'tools/list', 'prompts/list', 'resources/list'] },
          default: [],
        },
      },
      required: [],
      default: {},
    },
    upstreams: {
      type: 'array',
      // One schema per transport, chosen by `transport`: errors name the keys of that one only.
      items: {
        type: 'object',
        properties: { transport: { type: 'string', enum: ['stdio', 'http', 'sse'] } },
        required: ['transport'],
        discriminator: { propertyName: 'transport' },
        oneOf: [stdioUpstream, httpUpstream],
      },
      minItems: 1,
    },
  },
  required: ['upstreams'],
};
