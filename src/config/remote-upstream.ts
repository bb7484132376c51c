/**
 * A remote MCP server, Streamable HTTP (`http`) or the 2024-11-05 HTTP+SSE transport (`sse`):
 * its schema (with the gateway's own OAuth client, TLS, retries, breaker and pings), its types
 * and its checks.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';
import { oauthClientChecks, oauthClientCredentials } from './oauth-client.js';
import { tlsChecks, tlsSchema } from './tls.js';
import { commonUpstreamProperties, type WithoutNull } from './upstream-common.js';

const oauthSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    "The gateway as an OAuth client of the upstream's authorization server, instead of a static Authorization " +
    'header: see docs/auth-and-identity.md.',
  properties: {
    tokenUrl: { type: 'string', pattern: '^(https?://|\\$\\{)', description: 'The token endpoint; ${VAR} allowed.' },
    ...oauthClientCredentials,
    scopes: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Scopes asked for.' },
    resource: {
      type: 'string',
      pattern: '^https?://',
      description: "RFC 8707 resource indicator: the upstream's MCP endpoint as its authorization server names it.",
    },
    grant: {
      type: 'string',
      enum: ['client-credentials', 'token-exchange', 'authorization-code'],
      description:
        "client-credentials (the default): the gateway's own token for every call. token-exchange (RFC 8693): each " +
        "user's validated token is exchanged for one of this upstream's, and calls go as that user. " +
        'authorization-code: each user grants the gateway a token of their own (OAuth 2.1 with PKCE S256), through ' +
        'a link the gateway gives them on their first call (URL elicitation).',
    },
    authorizationUrl: {
      type: 'string',
      pattern: '^(https?://|\\$\\{)',
      description:
        "authorization-code: where the user's browser goes to consent. Absent: from the authorization server's " +
        "RFC 8414 metadata (at issuer, or the tokenUrl's origin).",
    },
    revocationUrl: {
      type: 'string',
      pattern: '^(https?://|\\$\\{)',
      description:
        'authorization-code: the RFC 7009 endpoint tokens are revoked at (absent: from the metadata, if it names ' +
        'one).',
    },
    issuer: {
      type: 'string',
      pattern: '^https?://',
      description: "authorization-code: the authorization server's issuer, for its RFC 8414 metadata.",
    },
    redirectUri: {
      type: 'string',
      pattern: '^https?://',
      description:
        "authorization-code: the gateway's /oauth/callback as browsers reach it (registered at the authorization " +
        'server). Default: /oauth/callback at the origin of auth.resource.',
    },
    audience: {
      type: 'string',
      minLength: 1,
      description:
        'token-exchange: the upstream as its authorization server names it (RFC 8693 audience), e.g. urn:crm.',
    },
    actorToken: {
      type: 'string',
      minLength: 1,
      description: "token-exchange: the gateway's own token as the actor (delegation); ${VAR} from the environment.",
    },
    actorTokenType: {
      type: 'string',
      enum: ['access_token', 'jwt', 'id_token'],
      description: 'token-exchange: the type of actorToken. Default: access_token.',
    },
  },
  required: ['tokenUrl', 'clientId', 'clientSecret'],
} as const;

// Retries of one HTTP exchange (see upstream/connection/retry-policy.ts for which ones).
const retrySchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Retries of one HTTP exchange, jittered exponential: a message whose connection could not be opened, and for ' +
    'requests that change nothing a broken reply, a 429 or a 5xx. tools/call and initialize are never sent twice.',
  properties: {
    attempts: {
      type: 'integer',
      minimum: 0,
      maximum: 10,
      default: 2,
      description: 'Tries after the first one; 0 turns retries off.',
    },
    initialDelayMs: { type: 'integer', minimum: 1, default: 100, description: 'The first delay; at most maxDelayMs.' },
    maxDelayMs: { type: 'integer', minimum: 1, default: 2000, description: 'The longest delay.' },
  },
  required: [],
  default: {},
} as const;

const breakerSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'The circuit breaker, over all workers of the upstream: while open every call fails at once with ' +
    'UPSTREAM_CIRCUIT_OPEN, and the upstream leaves the catalog.',
  properties: {
    failureThreshold: {
      type: 'integer',
      minimum: 1,
      default: 5,
      description:
        'Failed exchanges in a row (connection failures, timeouts, 5xx, replies that are not MCP; not 429) that open ' +
        'it.',
    },
    openMs: {
      type: 'integer',
      minimum: 1,
      default: 5000,
      description:
        'How long it stays open before one exchange goes through as a probe; doubles (jittered) per failed probe, ' +
        'up to maxOpenMs.',
    },
    maxOpenMs: {
      type: 'integer',
      minimum: 1,
      default: 60000,
      description: 'The longest it stays open between probes.',
    },
  },
  required: [],
  default: {},
} as const;

const healthSchema = {
  type: 'object',
  additionalProperties: false,
  description: "Pings by a session of the gateway's own, so an outage and a recovery are seen without client traffic.",
  properties: {
    intervalMs: {
      type: 'integer',
      minimum: 0,
      default: 30000,
      description:
        'Time between pings while the upstream is up (a failed one opens the circuit); 0: no pings (probes after an ' +
        'outage still run).',
    },
    timeoutMs: { type: 'integer', minimum: 1, default: 5000, description: 'A ping not answered within this failed.' },
  },
  required: [],
  default: {},
} as const;

export const remoteUpstreamSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonUpstreamProperties,
    transport: {
      type: 'string',
      enum: ['http', 'sse'],
      description: 'http: Streamable HTTP (2025-03-26 to 2025-11-25, and 2026-07-28); sse: HTTP+SSE (2024-11-05).',
    },
    url: {
      type: 'string',
      pattern: '^(https?://|\\$\\{)',
      description:
        'The MCP endpoint (http), or the SSE endpoint to GET (sse): http(s), or a ${VAR} that must expand to one; ' +
        'no credentials in it.',
    },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      required: [],
      default: {},
      description:
        'Sent with every request, e.g. { Authorization: "Bearer ${REMOTE_TOKEN}" }: ${VAR} from the gateway\'s ' +
        "environment, ${claims.x} from the caller's token (sent only with calls made for a user). Never a client's " +
        'own token; not with oauth (the token goes in Authorization), nor the headers the gateway sets itself.',
    },
    oauth: oauthSchema,
    discovery: {
      type: 'string',
      enum: ['gateway', 'anonymous'],
      description:
        'With oauth.grant token-exchange or authorization-code: what initialize, lists and health pings (made for ' +
        "no user) go with. gateway (the default): the gateway's own token (client credentials grant, same client); " +
        'anonymous: no Authorization at all.',
    },
    connectTimeoutMs: {
      type: 'integer',
      minimum: 1,
      default: 10000,
      description: 'To open a TCP (and TLS) connection to its origin.',
    },
    tls: {
      ...tlsSchema,
      description: 'For https URLs only, all optional: a private CA, a client certificate (mTLS), the name to verify.',
    },
    retry: retrySchema,
    breaker: breakerSchema,
    health: healthSchema,
  },
  required: ['name', 'transport', 'url'],
} as const;

export type HttpUpstreamConfig = WithoutNull<FromSchema<typeof remoteUpstreamSchema>, 'prefix'>;
export type OAuthClientConfig = FromSchema<typeof oauthSchema>;
export type RetryConfig = FromSchema<typeof retrySchema>;
export type BreakerConfig = FromSchema<typeof breakerSchema>;
export type HealthConfig = FromSchema<typeof healthSchema>;

// The gateway sets these itself; an override would break the protocol or the session.
const RESERVED_HEADERS = new Set([
  'content-type',
  'accept',
  'content-length',
  'host',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'connection',
  'transfer-encoding',
]);

/** `${VAR}` in the url and header values; the url must then be an http(s) URL. */
export function remoteUpstreamChecks(
  u: HttpUpstreamConfig,
  at: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): void {
  // (A url the schema's pattern already rejected is not named twice.)
  if (typeof u.url === 'string' && /^(https?:\/\/|\$\{)/.test(u.url)) {
    u.url = substituteEnv(u.url, `${at}.url`, env, problems);
    let url: URL | undefined;
    try {
      url = new URL(u.url);
    } catch {
      problems.push(`${at}.url: "${u.url}" is not a URL`);
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
      problems.push(`${at}.url: must be an http or https URL`);
    if (url && (url.username || url.password)) problems.push(`${at}.url: must not carry credentials (use headers)`);
  }
  if (typeof u.headers === 'object' && u.headers !== null) {
    for (const [k, v] of Object.entries(u.headers)) {
      if (typeof v === 'string') u.headers[k] = substituteEnv(v, `${at}.headers.${k}`, env, problems);
      if (typeof v === 'string') claimTemplateChecks(v, `${at}.headers.${k}`, problems);
      if (RESERVED_HEADERS.has(k.toLowerCase()))
        problems.push(`${at}.headers.${k}: is set by the gateway and cannot be configured`);
    }
  }
  if (typeof u.oauth === 'object' && u.oauth !== null) {
    oauthClientChecks(u.oauth, 'tokenUrl', `${at}.oauth`, env, problems);
    if (typeof u.oauth.actorToken === 'string')
      u.oauth.actorToken = substituteEnv(u.oauth.actorToken, `${at}.oauth.actorToken`, env, problems);
    for (const key of ['authorizationUrl', 'revocationUrl'] as const) {
      const value = u.oauth[key];
      if (typeof value === 'string') u.oauth[key] = substituteEnv(value, `${at}.oauth.${key}`, env, problems);
    }
    const named = Object.keys(u.headers ?? {}).find((k) => k.toLowerCase() === 'authorization');
    if (named) problems.push(`${at}.headers.${named}: cannot be set with ${at}.oauth (the token goes there)`);
  }
  if (typeof u.tls === 'object' && u.tls !== null) {
    tlsChecks(u.tls, `${at}.tls`, problems);
    if (typeof u.url === 'string' && u.url.startsWith('http:')) problems.push(`${at}.tls: applies to https URLs only`);
  }
  if (u.breaker && u.breaker.openMs > u.breaker.maxOpenMs)
    problems.push(`${at}.breaker.openMs: must be <= breaker.maxOpenMs (${u.breaker.maxOpenMs})`);
  if (u.retry && u.retry.initialDelayMs > u.retry.maxDelayMs)
    problems.push(`${at}.retry.initialDelayMs: must be <= retry.maxDelayMs (${u.retry.maxDelayMs})`);
}

/** `${claims.name}` in a header value: a claim of the client's token, filled per request. */
export const CLAIM_REF = /\$\{claims\.([^}]*)\}/g;
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function claimTemplateChecks(value: string, at: string, problems: string[]): void {
  for (const m of value.matchAll(CLAIM_REF)) {
    if (!CLAIM_NAME.test(m[1]!))
      problems.push(`${at}: "\${claims.${m[1]}}" names no claim (a name of letters, digits and _)`);
  }
}

/** Whether any header value is built from the client's token's claims. */
export function usesClaims(u: { headers?: Record<string, string> }): boolean {
  return Object.values(u.headers ?? {}).some((v) => /\$\{claims\./.test(v));
}

/** Whether the upstream calls as each user (a token exchange, or headers from their claims). */
export function actsForUsers(u: HttpUpstreamConfig): boolean {
  return u.oauth?.grant === 'token-exchange' || u.oauth?.grant === 'authorization-code' || usesClaims(u);
}
