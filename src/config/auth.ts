/** The `auth` section: who may call (`none`, JWTs, or introspected opaque tokens), its type, its checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { oauthClientChecks, oauthClientCredentials } from './oauth-client.js';

export const authSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // jwt: tokens verified with the issuer's keys; introspection: opaque tokens checked with the authorization server (RFC 7662).
    mode: { type: 'string', enum: ['none', 'jwt', 'introspection'], default: 'none' },
    // The gateway's MCP endpoint as clients name it (RFC 8707 resource, RFC 9728 metadata).
    resource: { type: 'string', pattern: '^https?://' },
    // Issuers clients get tokens from, listed in the protected resource metadata.
    authorizationServers: { type: 'array', items: { type: 'string', pattern: '^https?://' }, default: [] },
    // The `iss` a token must carry (introspection: when the answer names one).
    issuer: { type: 'string', minLength: 1 },
    // Where the issuer publishes its signing keys (jwt).
    jwksUrl: { type: 'string', pattern: '^https?://' },
    // How to ask the authorization server about a token (introspection).
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
    // The `aud` a token must carry (default: `resource`).
    audience: { type: 'string', minLength: 1 },
    // Scopes every request's token must carry.
    requiredScopes: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
    // Scopes a tools/call must carry besides, by the tool's name as clients see it (`*` globs).
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
} as const;

export type AuthConfig = FromSchema<typeof authSchema>;

/** What a mode needs; `${VAR}` in the introspection endpoint and secret. */
export function authChecks(auth: AuthConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (auth.mode === 'none') return;
  const required = auth.mode === 'jwt' ? (['resource', 'issuer', 'jwksUrl'] as const) : (['resource', 'introspection'] as const);
  for (const key of required) {
    if (auth[key] === undefined) problems.push(`auth.${key}: is required when auth.mode is "${auth.mode}"`);
  }
  if (auth.authorizationServers.length === 0) problems.push(`auth.authorizationServers: name at least one when auth.mode is "${auth.mode}"`);
  if (auth.introspection) oauthClientChecks(auth.introspection, 'url', 'auth.introspection', env, problems);
}
