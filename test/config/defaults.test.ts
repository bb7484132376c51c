/**
 * Every default of the config, pinned to the values it had before config/ was split into one
 * module per section (taken from that code, not from the modules): once as the `default` keywords
 * of the assembled schema, key by key, and once as what resolveConfig hands on.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';

/** The `default` keywords of a schema by the key path they apply to (`upstreams[](stdio).pool.min`). */
function defaultsOf(node: unknown, path = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (typeof node !== 'object' || node === null) return out;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'default') out[path] = value;
    else if (key === 'properties')
      for (const [name, sub] of Object.entries(value as object)) defaultsOf(sub, path ? `${path}.${name}` : name, out);
    else if (key === 'items') defaultsOf(value, `${path}[]`, out);
    else if (key === 'oneOf' && path.endsWith('upstreams[]'))
      for (const branch of value as Array<{ properties: { transport: { const?: string; enum?: string[] } } }>)
        defaultsOf(
          branch,
          `${path}(${[branch.properties.transport.const ?? branch.properties.transport.enum].flat().join('|')})`,
          out,
        );
    // (Anywhere else, a default would still be found, under a path that names the keyword.)
    else defaultsOf(value, `${path}/${key}`, out);
  }
  return out;
}

const SCHEMA_DEFAULTS = {
  'listen.host': '127.0.0.1',
  'listen.port': 8080,
  'listen.backlog': 4096,
  listen: {},
  'server.headersTimeoutMs': 10000,
  'server.requestTimeoutMs': 30000,
  'server.keepAliveTimeoutMs': 5000,
  'server.maxConnections': 10000,
  server: {},
  path: '/mcp',
  logLevel: 'info',
  logRepeatMs: 60000,
  'limits.bodyBytes': 4194304,
  'limits.maxJsonDepth': 64,
  'limits.maxBatchSize': 100,
  'limits.maxBodyBytesPerSecondPerClient': 0,
  'limits.maxInFlightPerClient': 64,
  'limits.maxSessions': 100000,
  'limits.maxSessionsPerPrincipal': 1000,
  'limits.sessionEvictionIdleSeconds': 60,
  'limits.maxStreams': 10000,
  'limits.maxStreamBufferedBytes': 4194304,
  'limits.workerStartsPerMinute': 60,
  limits: {},
  'security.allowedOrigins': [],
  security: {},
  'sessions.store': 'memory',
  'sessions.keyPrefix': 'mcpgw:',
  'sessions.ttlSeconds': 3600,
  'sessions.cacheMs': 250,
  'sessions.health.intervalMs': 2000,
  'sessions.health.timeoutMs': 1000,
  'sessions.health': {},
  'sessions.tls.rejectUnauthorized': true,
  sessions: {},
  'sse.keepAliveMs': 15000,
  sse: {},
  // On unless turned off (`false`); the keys inside take their defaults in config/server.ts (legacySseSettings, websocketSettings).
  legacySse: {},
  websocket: {},
  'resumability.maxEvents': 1000,
  'resumability.maxAgeSeconds': 300,
  'resumability.retryMs': 1000,
  resumability: {},
  'pagination.pageSize': 500,
  pagination: {},
  'stateless.listTtlMs': 60000,
  'stateless.readTtlMs': 0,
  'stateless.inputTimeoutMs': 300000,
  'stateless.stateTtlMs': 600000,
  'stateless.maxInputRounds': 10,
  stateless: {},
  // Added with /status (after the split): the page is on, open while auth is off.
  'status.enabled': true,
  'status.principals': [],
  'status.scopes': [],
  'status.refreshSeconds': 5,
  // Added with tasks (#16).
  tasks: {},
  'tasks.maxPerPrincipal': 1000,
  'tasks.maxBytesPerPrincipal': 67108864,
  'tasks.defaultTtlMs': 3600000,
  'tasks.maxTtlMs': 86400000,
  'tasks.pollIntervalMs': 1000,
  'tasks.inputWindowMs': 1000,
  // Added with rate limits (#31): no default for the section itself (absent: off).
  'rateLimits.rules[].key': 'principal',
  'rateLimits.rules[].burst': 0,
  'rateLimits.onStoreError': 'allow',
  'rateLimits.storeTimeoutMs': 250,
  // Added with pinned definitions (#32): off unless asked for.
  pinning: {},
  'pinning.mode': 'off',
  // Added with quotas (#31): no default for the section itself (absent: off).
  'quotas.onStoreError': 'allow',
  'quotas.storeTimeoutMs': 250,
  'quotas.topConsumers': 10,
  status: {},
  'auth.mode': 'none',
  'auth.authorizationServers': [],
  'auth.browserLogin.scopes': ['openid'],
  'auth.introspection.cacheSeconds': 60,
  'auth.introspection.timeoutMs': 5000,
  'auth.requiredScopes': [],
  'auth.toolScopes': [],
  'auth.clockToleranceSeconds': 30,
  auth: {},
  'shutdown.drainMs': 10000,
  shutdown: {},
  'cluster.workers': 1,
  cluster: {},
  'audit.methods': [],
  audit: {},
  'reload.watch': true,
  'reload.debounceMs': 300,
  'reload.pollSeconds': 10,
  reload: {},
  'upstreams[](stdio).mode': 'shared',
  'upstreams[](stdio).pool.min': 1,
  'upstreams[](stdio).pool.spares': 1,
  'upstreams[](stdio).pool.max': 4,
  'upstreams[](stdio).pool.maxInFlight': 32,
  'upstreams[](stdio).pool.maxInFlightBytes': 2097152,
  'upstreams[](stdio).pool.heavyRequestBytes': 262144,
  'upstreams[](stdio).pool.queueSize': 1000,
  'upstreams[](stdio).pool.queueTimeoutMs': 5000,
  'upstreams[](stdio).pool.busyAfterMs': 1000,
  'upstreams[](stdio).pool.idleTimeoutMs': 300000,
  'upstreams[](stdio).pool': {},
  'upstreams[](stdio).timeoutMs': 60000,
  'upstreams[](stdio).maxTimeoutMs': 600000,
  'upstreams[](stdio).required': false,
  'upstreams[](stdio).validateArguments': true,
  'upstreams[](stdio).protocolVersion': 'auto',
  'upstreams[](stdio).args': [],
  'upstreams[](stdio).env': {},
  // Only inside a `fairness` block, which has no default (absent: no per-principal share).
  'upstreams[](stdio).fairness.queue': 32,
  'upstreams[](http|sse).fairness.queue': 32,
  // Only inside a `sandbox` block, which has no default (absent: not sandboxed).
  'upstreams[](stdio).sandbox.network': 'none',
  'upstreams[](stdio).sandbox.readOnly': [],
  'upstreams[](stdio).sandbox.writable': [],
  'upstreams[](stdio).sandbox.env': [],
  'upstreams[](http|sse).mode': 'shared',
  'upstreams[](http|sse).pool.min': 1,
  'upstreams[](http|sse).pool.spares': 1,
  'upstreams[](http|sse).pool.max': 4,
  'upstreams[](http|sse).pool.maxInFlight': 32,
  'upstreams[](http|sse).pool.maxInFlightBytes': 2097152,
  'upstreams[](http|sse).pool.heavyRequestBytes': 262144,
  'upstreams[](http|sse).pool.queueSize': 1000,
  'upstreams[](http|sse).pool.queueTimeoutMs': 5000,
  'upstreams[](http|sse).pool.busyAfterMs': 1000,
  'upstreams[](http|sse).pool.idleTimeoutMs': 300000,
  'upstreams[](http|sse).pool': {},
  'upstreams[](http|sse).timeoutMs': 60000,
  'upstreams[](http|sse).maxTimeoutMs': 600000,
  'upstreams[](http|sse).required': false,
  'upstreams[](http|sse).validateArguments': true,
  'upstreams[](http|sse).protocolVersion': 'auto',
  'upstreams[](http|sse).headers': {},
  'upstreams[](http|sse).oauth.scopes': [],
  'upstreams[](http|sse).connectTimeoutMs': 10000,
  'upstreams[](http|sse).tls.rejectUnauthorized': true,
  'upstreams[](http|sse).retry.attempts': 2,
  'upstreams[](http|sse).retry.initialDelayMs': 100,
  'upstreams[](http|sse).retry.maxDelayMs': 2000,
  'upstreams[](http|sse).retry': {},
  'upstreams[](http|sse).breaker.failureThreshold': 5,
  'upstreams[](http|sse).breaker.openMs': 5000,
  'upstreams[](http|sse).breaker.maxOpenMs': 60000,
  'upstreams[](http|sse).breaker': {},
  'upstreams[](http|sse).health.intervalMs': 30000,
  'upstreams[](http|sse).health.timeoutMs': 5000,
  'upstreams[](http|sse).health': {},
  // Added with virtual servers, API keys and prefixed resource URIs (issue 14).
  'auth.apiKeys': [],
  'auth.apiKeys[].scopes': [],
  'upstreams[](stdio).resources.uris': 'as-is',
  'upstreams[](http|sse).resources.uris': 'as-is',
  'servers[].tools': [],
  'servers[].prompts': [],
  'servers[].resources': [],
  'servers[].overrides/additionalProperties.arguments.fixed': {},
  'servers[].overrides/additionalProperties.arguments.defaults': {},
  'servers[].overrides/additionalProperties.arguments': {},
  'servers[].overrides': {},
  'servers[].principals': [],
  'servers[].requiredScopes': [],
  servers: [],
  // Added with tool search (issue 30).
  'toolSearch.enabled': false,
  'toolSearch.pinned': [],
  'toolSearch.maxResults': 10,
  'toolSearch.expose': 'none',
  'toolSearch.exposeMax': 20,
  'servers[].toolSearch.enabled': false,
  'servers[].toolSearch.pinned': [],
  'servers[].toolSearch.maxResults': 10,
  'servers[].toolSearch.expose': 'none',
  'servers[].toolSearch.exposeMax': 20,
  // Added with guardrails (issue 33).
  // A built-in's defaults sit in the `else` branch, an interceptor server's in `then` (ajv applies both).
  'interceptors[].mode': 'on',
  'interceptors[]/else.action': 'redact',
  'interceptors[]/else.phases': ['request', 'response'],
  'interceptors[]/else.allowFields': [],
  'interceptors[]/then.onError': 'deny',
  'interceptors[]/then.timeoutMs': 2000,
  'servers[].interceptors[].mode': 'on',
  'servers[].interceptors[]/else.action': 'redact',
  'servers[].interceptors[]/else.phases': ['request', 'response'],
  'servers[].interceptors[]/else.allowFields': [],
  'servers[].interceptors[]/then.onError': 'deny',
  'servers[].interceptors[]/then.timeoutMs': 2000,
  // Added with per-upstream guardrails (issue 33): an upstream's own list, as the top level's.
  'upstreams[](http|sse).interceptors[].mode': 'on',
  'upstreams[](http|sse).interceptors[]/else.action': 'redact',
  'upstreams[](http|sse).interceptors[]/else.phases': ['request', 'response'],
  'upstreams[](http|sse).interceptors[]/else.allowFields': [],
  'upstreams[](http|sse).interceptors[]/then.onError': 'deny',
  'upstreams[](http|sse).interceptors[]/then.timeoutMs': 2000,
  'upstreams[](stdio).interceptors[].mode': 'on',
  'upstreams[](stdio).interceptors[]/else.action': 'redact',
  'upstreams[](stdio).interceptors[]/else.phases': ['request', 'response'],
  'upstreams[](stdio).interceptors[]/else.allowFields': [],
  'upstreams[](stdio).interceptors[]/then.onError': 'deny',
  'upstreams[](stdio).interceptors[]/then.timeoutMs': 2000,
  // Added with server cards (issue 35): off.
  serverCards: {},
  'serverCards.enabled': false,
  'serverCards.public': false,
  'serverCards.maxAgeSeconds': 300,
  // Added with the result cache (issue 35): on, 64 MiB, 5 min at most.
  cache: {},
  'cache.enabled': true,
  'cache.maxBytes': 67108864,
  'cache.maxTtlMs': 300000,
};

const POOL = {
  min: 1,
  spares: 1,
  max: 4,
  maxInFlight: 32,
  maxInFlightBytes: 2097152,
  heavyRequestBytes: 262144,
  queueSize: 1000,
  queueTimeoutMs: 5000,
  busyAfterMs: 1000,
  idleTimeoutMs: 300000,
};
const COMMON = {
  mode: 'shared',
  pool: POOL,
  timeoutMs: 60000,
  maxTimeoutMs: 600000,
  required: false,
  validateArguments: true,
  protocolVersion: 'auto',
};
const REMOTE = {
  ...COMMON,
  headers: {},
  connectTimeoutMs: 10000,
  retry: { attempts: 2, initialDelayMs: 100, maxDelayMs: 2000 },
  breaker: { failureThreshold: 5, openMs: 5000, maxOpenMs: 60000 },
  health: { intervalMs: 30000, timeoutMs: 5000 },
};

describe('config defaults', () => {
  it('the assembled schema carries every default it had, and no other', () => {
    expect(defaultsOf(configSchema)).toEqual(SCHEMA_DEFAULTS);
  });

  it('a config naming only an upstream comes back with every section filled in', () => {
    const config = resolveConfig({ upstreams: [{ name: 'a', transport: 'stdio', command: 'x' }] }, {});
    expect(config).toEqual({
      upstreams: [{ name: 'a', transport: 'stdio', command: 'x', ...COMMON, args: [], env: {} }],
      listen: { host: '127.0.0.1', port: 8080, backlog: 4096 },
      server: { headersTimeoutMs: 10000, requestTimeoutMs: 30000, keepAliveTimeoutMs: 5000, maxConnections: 10000 },
      path: '/mcp',
      logLevel: 'info',
      logRepeatMs: 60000,
      limits: {
        bodyBytes: 4194304,
        maxJsonDepth: 64,
        maxBatchSize: 100,
        maxBodyBytesPerSecondPerClient: 0,
        maxInFlightPerClient: 64,
        maxSessions: 100000,
        maxSessionsPerPrincipal: 1000,
        sessionEvictionIdleSeconds: 60,
        maxStreams: 10000,
        maxStreamBufferedBytes: 4194304,
        workerStartsPerMinute: 60,
      },
      security: { allowedOrigins: [] },
      sessions: {
        store: 'memory',
        keyPrefix: 'mcpgw:',
        ttlSeconds: 3600,
        cacheMs: 250,
        health: { intervalMs: 2000, timeoutMs: 1000 },
      },
      sse: { keepAliveMs: 15000 },
      legacySse: {},
      websocket: {},
      resumability: { maxEvents: 1000, maxAgeSeconds: 300, retryMs: 1000 },
      pagination: { pageSize: 500 },
      stateless: { listTtlMs: 60000, readTtlMs: 0, inputTimeoutMs: 300000, stateTtlMs: 600000, maxInputRounds: 10 },
      status: { enabled: true, principals: [], scopes: [], refreshSeconds: 5 },
      tasks: {
        maxPerPrincipal: 1000,
        maxBytesPerPrincipal: 67108864,
        defaultTtlMs: 3600000,
        maxTtlMs: 86400000,
        pollIntervalMs: 1000,
        inputWindowMs: 1000,
      },
      auth: {
        mode: 'none',
        apiKeys: [],
        authorizationServers: [],
        requiredScopes: [],
        toolScopes: [],
        clockToleranceSeconds: 30,
      },
      shutdown: { drainMs: 10000 },
      cluster: { workers: 1 },
      audit: { methods: [] },
      servers: [],
      serverCards: { enabled: false, public: false, maxAgeSeconds: 300 },
      cache: { enabled: true, maxBytes: 67108864, maxTtlMs: 300000 },
      reload: { watch: true, debounceMs: 300, pollSeconds: 10 },
      pinning: { mode: 'off' },
    });
  });

  it('optional blocks get their own defaults when present: upstream tls and oauth, introspection, sessions tls', () => {
    const config = resolveConfig(
      {
        upstreams: [
          { name: 'h', transport: 'http', url: 'https://h.example/mcp' },
          {
            name: 's',
            transport: 'sse',
            url: 'https://h.example/sse',
            tls: {},
            oauth: { tokenUrl: 'https://t.example', clientId: 'i', clientSecret: 's' },
          },
        ],
        auth: {
          mode: 'introspection',
          resource: 'https://gw.example/mcp',
          authorizationServers: ['https://as.example'],
          introspection: { url: 'https://as.example/i', clientId: 'i', clientSecret: 's' },
          toolScopes: [{ tools: ['a'], scopes: ['b'] }],
        },
        sessions: { store: 'redis', redisUrl: 'rediss://r:6379', tls: {} },
      },
      {},
    );
    expect(config.upstreams).toEqual([
      { name: 'h', transport: 'http', url: 'https://h.example/mcp', ...REMOTE },
      {
        name: 's',
        transport: 'sse',
        url: 'https://h.example/sse',
        ...REMOTE,
        tls: { rejectUnauthorized: true },
        oauth: { tokenUrl: 'https://t.example', clientId: 'i', clientSecret: 's', scopes: [] },
      },
    ]);
    expect(config.auth).toEqual({
      mode: 'introspection',
      apiKeys: [],
      resource: 'https://gw.example/mcp',
      authorizationServers: ['https://as.example'],
      introspection: {
        url: 'https://as.example/i',
        clientId: 'i',
        clientSecret: 's',
        cacheSeconds: 60,
        timeoutMs: 5000,
      },
      toolScopes: [{ tools: ['a'], scopes: ['b'] }],
      requiredScopes: [],
      clockToleranceSeconds: 30,
    });
    expect(config.sessions).toEqual({
      store: 'redis',
      redisUrl: 'rediss://r:6379',
      tls: { rejectUnauthorized: true },
      keyPrefix: 'mcpgw:',
      ttlSeconds: 3600,
      cacheMs: 250,
      health: { intervalMs: 2000, timeoutMs: 1000 },
    });
  });
});
