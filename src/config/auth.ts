/** The `auth` section: who may call (`none`, JWTs, or introspected opaque tokens), its type, its checks. */
import type { FromSchema } from 'json-schema-to-ts';
import { substituteEnv } from './env.js';
import { oauthClientChecks, oauthClientCredentials } from './oauth-client.js';

export const authSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Who may call the MCP endpoints (health, readiness and metrics stay open): see docs/auth-and-identity.md.',
  properties: {
    mode: {
      type: 'string',
      enum: ['none', 'jwt', 'introspection', 'api-key'],
      default: 'none',
      description:
        "none: nothing is checked. jwt: OAuth 2.1 bearer JWTs verified with the issuer's keys (the gateway as " +
        'resource server). introspection: opaque tokens checked with the authorization server (RFC 7662). api-key: ' +
        'static keys, each known by the sha256 of its value (apiKeys).',
    },
    apiKeys: {
      type: 'array',
      default: [],
      maxItems: 10000,
      description: 'api-key: who holds which key. The key itself never appears here: its hex sha256 does.',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          name: {
            type: 'string',
            pattern: '^[A-Za-z0-9_.@:-]+$',
            maxLength: 128,
            description: 'The principal of requests sent with this key (servers[].principals name it).',
          },
          sha256: {
            type: 'string',
            minLength: 1,
            maxLength: 256,
            description:
              'The hex sha256 of the key (64 hex digits once ${VAR} is expanded), e.g. from ' +
              'printf %s "$KEY" | sha256sum.',
          },
          scopes: {
            type: 'array',
            items: { type: 'string', minLength: 1 },
            default: [],
            description: "What requests with this key may do, as a token's scopes would (requiredScopes, toolScopes).",
          },
        },
        required: ['name', 'sha256'],
      },
    },
    resource: {
      type: 'string',
      pattern: '^https?://',
      description:
        "This MCP endpoint as clients name it (RFC 8707 resource, RFC 9728 metadata): a token's aud by default. " +
        'Required with jwt and introspection.',
    },
    authorizationServers: {
      type: 'array',
      items: { type: 'string', pattern: '^https?://' },
      default: [],
      description:
        'Issuers clients get tokens from, listed in the protected resource metadata; at least one with jwt and ' +
        'introspection.',
    },
    issuer: {
      type: 'string',
      minLength: 1,
      description: 'The iss a token must carry (introspection: when the answer names one). Required with jwt.',
    },
    jwksUrl: {
      type: 'string',
      pattern: '^https?://',
      description: 'jwt: where the issuer publishes its signing keys (fetched and cached by jose). Required with jwt.',
    },
    introspection: {
      type: 'object',
      additionalProperties: false,
      description: 'introspection: how to ask the authorization server about a token (RFC 7662, HTTP Basic).',
      properties: {
        url: {
          type: 'string',
          pattern: '^(https?://|\\$\\{)',
          description: 'The introspection endpoint; ${VAR} allowed.',
        },
        ...oauthClientCredentials,
        cacheSeconds: {
          type: 'integer',
          minimum: 0,
          maximum: 3600,
          default: 60,
          description: "An answer is reused this long, never past the token's exp.",
        },
        timeoutMs: {
          type: 'integer',
          minimum: 100,
          maximum: 60000,
          default: 5000,
          description: 'No answer within this: 503 AUTHORIZATION_SERVER_UNAVAILABLE (retryable), not 401.',
        },
      },
      required: ['url', 'clientId', 'clientSecret'],
    },
    audience: { type: 'string', minLength: 1, description: 'The aud a token must carry, instead of resource.' },
    requiredScopes: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: "Scopes every request's token must carry; else 403 INSUFFICIENT_SCOPE.",
    },
    toolScopes: {
      type: 'array',
      default: [],
      description:
        "Scopes a tools/call must carry besides, by the tool's name as clients see it; tools/list leaves out the " +
        'tools a token may not call. E.g. { tools: ["payments__*"], scopes: [mcp:payments] }.',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          tools: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', minLength: 1 },
            description: 'Exposed tool names (prefix included); * matches any run of characters.',
          },
          scopes: {
            type: 'array',
            minItems: 1,
            items: { type: 'string', minLength: 1 },
            description: 'Scopes a call of those tools needs, all of them.',
          },
        },
        required: ['tools', 'scopes'],
      },
    },
    clockToleranceSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 600,
      default: 30,
      description: "jwt: leeway on a token's time claims (exp, nbf, iat) for clocks that differ.",
    },
    browserLogin: {
      type: 'object',
      additionalProperties: false,
      description:
        "Optional (jwt, introspection): the page of an upstream's /oauth/start link first signs the browser in here " +
        "(authorization code with PKCE, at the authorization server clients get the gateway's tokens from), and " +
        'goes on only when the token it gets is for the principal the link was made for.',
      properties: {
        authorizationUrl: {
          type: 'string',
          pattern: '^(https?://|\\$\\{)',
          description: 'Where the browser signs in.',
        },
        tokenUrl: { type: 'string', pattern: '^(https?://|\\$\\{)', description: 'Where the code is redeemed.' },
        ...oauthClientCredentials,
        scopes: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: ['openid'],
          description: 'Scopes asked for.',
        },
        redirectUri: {
          type: 'string',
          pattern: '^https?://',
          description:
            'Where that server sends the browser back (registered there). Default: /oauth/login/callback at ' +
            "auth.resource's origin.",
        },
      },
      required: ['authorizationUrl', 'tokenUrl', 'clientId', 'clientSecret'],
    },
  },
  required: [],
  default: {},
} as const;

export type AuthConfig = FromSchema<typeof authSchema>;

/** What a mode needs; `${VAR}` in the introspection endpoint and secret. */
export function authChecks(auth: AuthConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (auth.mode === 'none') return;
  if (auth.browserLogin && auth.mode === 'api-key')
    problems.push(
      'auth.browserLogin: applies to auth.mode jwt or introspection (a principal an authorization server signs ' +
        'browsers in as)',
    );
  if (auth.mode === 'api-key') return apiKeyChecks(auth, env, problems);
  const required =
    auth.mode === 'jwt' ? (['resource', 'issuer', 'jwksUrl'] as const) : (['resource', 'introspection'] as const);
  for (const key of required) {
    if (auth[key] === undefined) problems.push(`auth.${key}: is required when auth.mode is "${auth.mode}"`);
  }
  if (auth.authorizationServers.length === 0)
    problems.push(`auth.authorizationServers: name at least one when auth.mode is "${auth.mode}"`);
  if (auth.introspection) oauthClientChecks(auth.introspection, 'url', 'auth.introspection', env, problems);
  const login = auth.browserLogin;
  if (login) {
    oauthClientChecks(login, 'tokenUrl', 'auth.browserLogin', env, problems);
    login.authorizationUrl = substituteEnv(login.authorizationUrl, 'auth.browserLogin.authorizationUrl', env, problems);
    if (login.redirectUri === undefined && auth.resource !== undefined)
      login.redirectUri = new URL('/oauth/login/callback', auth.resource).href;
  }
}

/** Unique names; each sha256 (after `${VAR}`) is 64 hex digits and names one key only. */
function apiKeyChecks(auth: AuthConfig, env: NodeJS.ProcessEnv, problems: string[]): void {
  if (!Array.isArray(auth.apiKeys) || auth.apiKeys.length === 0) {
    problems.push('auth.apiKeys: name at least one key ({ name, sha256 }) when auth.mode is "api-key"');
    return;
  }
  const names = new Map<string, number>();
  const hashes = new Map<string, number>();
  auth.apiKeys.forEach((key, i) => {
    if (typeof key !== 'object' || key === null || typeof key.sha256 !== 'string') return;
    const at = `auth.apiKeys[${i}]`;
    const seen = names.get(key.name);
    if (seen !== undefined) problems.push(`${at}.name: "${key.name}" is already used by auth.apiKeys[${seen}]`);
    names.set(key.name, i);
    key.sha256 = substituteEnv(key.sha256, `${at}.sha256`, env, problems).toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(key.sha256)) {
      problems.push(
        `${at}.sha256: must be the hex sha256 of the key (64 hex digits), e.g. from \`printf %s "$KEY" | sha256sum\``,
      );
      return;
    }
    const twin = hashes.get(key.sha256);
    if (twin !== undefined) problems.push(`${at}.sha256: is the same key as auth.apiKeys[${twin}]`);
    hashes.set(key.sha256, i);
  });
}
