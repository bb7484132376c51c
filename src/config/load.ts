import { accessSync, constants, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { configSchema, type GatewayConfig, type HttpUpstreamConfig, type TlsConfig } from './schema.js';

/** Every problem found in a config, each naming the key it is about. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

// `discriminator`: an upstream is checked against the schema of its `transport` only.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, discriminator: true });
const validate = ajv.compile<GatewayConfig>(configSchema);

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The embedded default: in-memory sessions and the bundled example upstreams. */
export function defaultConfigSource(): Record<string, unknown> {
  const example = (name: string) => ({
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [resolve(packageRoot, 'examples', name, 'server.mjs')],
  });
  return { upstreams: [example('echo'), example('slow')] };
}

function keyPath(instancePath: string): string {
  if (instancePath === '') return '(root)';
  return instancePath
    .slice(1)
    .split('/')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

function describe(error: ErrorObject): string {
  const at = keyPath(error.instancePath);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${at === '(root)' ? '' : `${at}.`}${String(p.additionalProperty)}: unknown key`;
    case 'required':
      return `${at === '(root)' ? '' : `${at}.`}${String(p.missingProperty)}: is required`;
    case 'pattern':
      if (at.endsWith('.url')) return `${at}: must be an http or https URL`;
      if (/\.cluster\[\d+\]$/.test(at)) return `${at}: must be host:port`;
      return `${at}: ${error.message ?? 'is invalid'}`;
    case 'enum':
      return `${at}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${at}: ${error.message ?? 'is invalid'}`;
  }
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `${NAME}` in upstream strings comes from the gateway's environment; a missing one is an error. */
function substituteEnv(value: string, where: string, env: NodeJS.ProcessEnv, problems: string[]): string {
  return value.replace(ENV_REF, (_m, name: string) => {
    const v = env[name];
    if (v === undefined) {
      problems.push(`${where}: environment variable ${name} is not set`);
      return '';
    }
    return v;
  });
}

/** `${VAR}` in a remote upstream's url and header values; the url must then be an http(s) URL. */
function remoteChecks(u: HttpUpstreamConfig, at: string, env: NodeJS.ProcessEnv, problems: string[]): void {
  // (A url the schema's pattern already rejected is not named twice.)
  if (typeof u.url === 'string' && /^(https?:\/\/|\$\{)/.test(u.url)) {
    u.url = substituteEnv(u.url, `${at}.url`, env, problems);
    let url: URL | undefined;
    try {
      url = new URL(u.url);
    } catch {
      problems.push(`${at}.url: "${u.url}" is not a URL`);
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`${at}.url: must be an http or https URL`);
    if (url && (url.username || url.password)) problems.push(`${at}.url: must not carry credentials (use headers)`);
  }
  if (typeof u.headers === 'object' && u.headers !== null) {
    for (const [k, v] of Object.entries(u.headers)) {
      if (typeof v === 'string') u.headers[k] = substituteEnv(v, `${at}.headers.${k}`, env, problems);
      // The gateway sets these itself; an override would break the protocol or the session.
      if (RESERVED_HEADERS.has(k.toLowerCase())) problems.push(`${at}.headers.${k}: is set by the gateway and cannot be configured`);
    }
  }
  if (typeof u.oauth === 'object' && u.oauth !== null) {
    u.oauth.tokenUrl = substituteEnv(u.oauth.tokenUrl, `${at}.oauth.tokenUrl`, env, problems);
    u.oauth.clientSecret = substituteEnv(u.oauth.clientSecret, `${at}.oauth.clientSecret`, env, problems);
    if (!/^https?:\/\//.test(u.oauth.tokenUrl)) problems.push(`${at}.oauth.tokenUrl: must be an http(s) URL`);
    const named = Object.keys(u.headers ?? {}).find((k) => k.toLowerCase() === 'authorization');
    if (named) problems.push(`${at}.headers.${named}: cannot be set with ${at}.oauth (the token goes there)`);
  }
  if (typeof u.tls === 'object' && u.tls !== null) {
    tlsChecks(u.tls, `${at}.tls`, problems);
    if (typeof u.url === 'string' && u.url.startsWith('http:')) problems.push(`${at}.tls: applies to https URLs only`);
  }
  if (u.breaker && u.breaker.openMs > u.breaker.maxOpenMs) problems.push(`${at}.breaker.openMs: must be <= breaker.maxOpenMs (${u.breaker.maxOpenMs})`);
  if (u.retry && u.retry.initialDelayMs > u.retry.maxDelayMs) problems.push(`${at}.retry.initialDelayMs: must be <= retry.maxDelayMs (${u.retry.maxDelayMs})`);
}

/** A `tls` block: a client certificate comes with its key, and every file named can be read. */
function tlsChecks(tls: TlsConfig, at: string, problems: string[]): void {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) problems.push(`${at}: certFile and keyFile go together (a client certificate and its key)`);
  for (const key of ['caFile', 'certFile', 'keyFile'] as const) {
    const file = tls[key];
    if (file === undefined) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch {
      problems.push(`${at}.${key}: cannot read ${file}`);
    }
  }
}

const RESERVED_HEADERS = new Set(['content-type', 'accept', 'content-length', 'host', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'connection', 'transfer-encoding']);

function semanticChecks(config: GatewayConfig, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const names = new Map<string, number>();
  (Array.isArray(config.upstreams) ? config.upstreams : []).forEach((u, i) => {
    if (typeof u !== 'object' || u === null) return; // (the schema errors already name it)
    const at = `upstreams[${i}]`;
    const seen = names.get(u.name);
    if (seen !== undefined) problems.push(`${at}.name: "${u.name}" is already used by upstreams[${seen}]`);
    names.set(u.name, i);
    if (u.pool?.min > u.pool?.max) problems.push(`${at}.pool.min: must be <= pool.max (${u.pool.max})`);
    if (u.timeoutMs > u.maxTimeoutMs) problems.push(`${at}.timeoutMs: must be <= maxTimeoutMs (${u.maxTimeoutMs})`);
    if (u.transport !== 'stdio') {
      remoteChecks(u, at, env, problems);
      return;
    }
    if (typeof u.command === 'string') u.command = substituteEnv(u.command, `${at}.command`, env, problems);
    if (Array.isArray(u.args)) u.args = u.args.map((a, j) => (typeof a === 'string' ? substituteEnv(a, `${at}.args[${j}]`, env, problems) : a));
    if (typeof u.env === 'object' && u.env !== null) {
      for (const [k, v] of Object.entries(u.env)) if (typeof v === 'string') u.env[k] = substituteEnv(v, `${at}.env.${k}`, env, problems);
    }
  });
  const server = config.server;
  // Node refuses a headers timeout longer than the whole-request one.
  if (typeof server === 'object' && server !== null && server.headersTimeoutMs > server.requestTimeoutMs) {
    problems.push(`server.headersTimeoutMs: must be <= server.requestTimeoutMs (${server.requestTimeoutMs})`);
  }
  if (typeof config.sessions === 'object' && config.sessions !== null) redisChecks(config.sessions, env, problems);
  if (typeof config.auth === 'object' && config.auth !== null && config.auth.mode !== 'none') authChecks(config.auth, env, problems);
  return problems;
}

function authChecks(auth: GatewayConfig['auth'], env: NodeJS.ProcessEnv, problems: string[]): void {
  const required = auth.mode === 'jwt' ? (['resource', 'issuer', 'jwksUrl'] as const) : (['resource', 'introspection'] as const);
  for (const key of required) {
    if (auth[key] === undefined) problems.push(`auth.${key}: is required when auth.mode is "${auth.mode}"`);
  }
  if (auth.authorizationServers.length === 0) problems.push(`auth.authorizationServers: name at least one when auth.mode is "${auth.mode}"`);
  const introspection = auth.introspection;
  if (introspection) {
    introspection.url = substituteEnv(introspection.url, 'auth.introspection.url', env, problems);
    introspection.clientSecret = substituteEnv(introspection.clientSecret, 'auth.introspection.clientSecret', env, problems);
    if (!/^https?:\/\//.test(introspection.url)) problems.push('auth.introspection.url: must be an http(s) URL');
  }
}

/** One Redis topology: `redisUrl` (a single node) or `redis` (Sentinel or Cluster), never both. */
function redisChecks(sessions: GatewayConfig['sessions'], env: NodeJS.ProcessEnv, problems: string[]): void {
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
  const has = (key: string) => (redis as unknown as Record<string, unknown>)[key] !== undefined;
  if (has('sentinels') && has('cluster')) {
    problems.push('sessions.redis: set either sentinels (with name) or cluster, not both');
  } else if (has('sentinels')) {
    if (!has('name')) problems.push('sessions.redis.name: is required with sessions.redis.sentinels (the master group name)');
  } else if (has('cluster')) {
    // A Cluster has one database and no sentinels: these would be silently ignored.
    for (const key of ['name', 'sentinelPassword', 'db']) if (has(key)) problems.push(`sessions.redis.${key}: applies to Sentinel only, not to sessions.redis.cluster`);
    for (const [i, node] of ('cluster' in redis && Array.isArray(redis.cluster) ? redis.cluster : []).entries()) {
      const port = typeof node === 'string' ? Number(node.slice(node.lastIndexOf(':') + 1)) : NaN;
      if (port < 1 || port > 65535) problems.push(`sessions.redis.cluster[${i}]: port must be 1-65535`);
    }
  } else {
    problems.push('sessions.redis: needs sentinels (with name) or cluster');
  }
  // Secrets may stay out of the file: ${VAR} comes from the gateway's environment.
  const secrets = redis as { password?: unknown; sentinelPassword?: unknown };
  if (typeof secrets.password === 'string') secrets.password = substituteEnv(secrets.password, 'sessions.redis.password', env, problems);
  if (typeof secrets.sentinelPassword === 'string') {
    secrets.sentinelPassword = substituteEnv(secrets.sentinelPassword, 'sessions.redis.sentinelPassword', env, problems);
  }
}

function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): void {
  // A `listen` that is not a mapping is left as it is, for the schema to name.
  const listen = (typeof raw.listen === 'object' && raw.listen !== null ? raw.listen : {}) as Record<string, unknown>;
  if (env.MCPGW_HOST) listen.host = env.MCPGW_HOST;
  if (env.MCPGW_PORT) {
    const port = Number(env.MCPGW_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push(`MCPGW_PORT: "${env.MCPGW_PORT}" is not a port number`);
    else listen.port = port;
  }
  if ((env.MCPGW_HOST || env.MCPGW_PORT) && raw.listen === undefined) raw.listen = listen;
  if (env.MCPGW_LOG_LEVEL) raw.logLevel = env.MCPGW_LOG_LEVEL;
  if (env.MCPGW_REDIS_URL) {
    const sessions = raw.sessions ?? {};
    if (typeof sessions === 'object' && sessions !== null && !Array.isArray(sessions)) {
      raw.sessions = { ...sessions, redisUrl: env.MCPGW_REDIS_URL };
    }
  }
}

/** Validates a parsed config object (file contents, or the embedded default). */
export function resolveConfig(source: unknown, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new ConfigError(['(root): the configuration must be a mapping of keys']);
  }
  const raw = structuredClone(source) as Record<string, unknown>;
  const problems: string[] = [];
  applyEnvOverrides(raw, env, problems);
  // A discriminator error repeats what the `transport` enum or `required` error already says.
  if (!validate(raw)) problems.push(...(validate.errors ?? []).filter((e) => e.keyword !== 'discriminator').map(describe));
  const config = raw as unknown as GatewayConfig;
  // Also on a config the schema rejected (guarded against its shape), so one run names every problem.
  problems.push(...semanticChecks(config, env));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Reads `file` (YAML or JSON), or the embedded default when there is none. */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  if (!file) return resolveConfig(defaultConfigSource(), env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text); // YAML is a superset of JSON, so one parser reads both
  } catch (err) {
    throw new ConfigError([`${file}: not valid YAML or JSON (${(err as Error).message.split('\n')[0]})`]);
  }
  return resolveConfig(parsed, env);
}
