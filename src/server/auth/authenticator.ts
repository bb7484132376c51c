import type { FastifyInstance } from 'fastify';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { AuthConfig } from '../../config/schema.js';
import { toolFilter } from '../../config/tool-filter.js';
import { AuthChallenge, GatewayError } from '../../jsonrpc/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { DataPathEvents } from '../../observability/events.js';
import type { Authenticator } from '../../contracts/authenticator.js';
import { SubjectToken } from '../../contracts/request-context.js';
import { apiKeyVerifier } from './api-keys.js';
import { InvalidToken, createIntrospector, type TokenClaims } from './token-introspection.js';

/**
 * The gateway as an OAuth 2.1 resource server (MCP authorization): every request to the MCP
 * endpoint carries a bearer token issued for this gateway (`aud`), by the configured issuer,
 * unexpired, with the required scopes: a JWT signed with one of the issuer's published keys
 * (`jwt`), or any token the authorization server vouches for when asked (`introspection`,
 * RFC 7662). The token stays here: upstreams get their own configured credentials, never the
 * client's token.
 */
export function createAuthenticator(
  config: AuthConfig,
  log?: Logger,
  diagnostics?: DataPathEvents,
): Authenticator | undefined {
  if (config.mode === 'none') return undefined;
  if (config.mode === 'api-key') return apiKeyAuthenticator(config);
  const resource = config.resource!;
  const audience = config.audience ?? resource;
  const verify =
    config.mode === 'jwt' ? jwtVerifier(config, audience) : introspectionVerifier(config, audience, log, diagnostics);
  // Principals name their issuer: an introspection answer need not, so its server stands in.
  const defaultIssuer = config.issuer ?? (config.introspection ? new URL(config.introspection.url).origin : '');
  const metadataUrl = protectedResourceMetadataUrl(resource);
  const challenge = (params: string) => `Bearer resource_metadata="${metadataUrl}"${params ? `, ${params}` : ''}`;
  const scopeHint = config.requiredScopes.length > 0 ? `, scope="${config.requiredScopes.join(' ')}"` : '';

  return {
    async authenticate(authorization) {
      const match = BEARER.exec(authorization ?? '');
      if (!match) {
        // No credentials at all: the challenge names where to learn how to get some (RFC 9728).
        throw new AuthChallenge(
          'UNAUTHORIZED',
          'Unauthorized: a bearer token is required',
          challenge(scopeHint.slice(2)),
        );
      }
      let payload: TokenClaims;
      try {
        payload = await verify(match[1]!);
      } catch (err) {
        // Anything else (the authorization server unreachable) is not the token's fault.
        if (!(err instanceof InvalidToken)) throw err;
        throw new AuthChallenge(
          'UNAUTHORIZED',
          `Unauthorized: ${err.reason}`,
          challenge(`error="invalid_token", error_description="${err.reason}"`),
        );
      }
      const granted = new Set(typeof payload.scope === 'string' ? payload.scope.split(' ') : []);
      const missing = config.requiredScopes.filter((s) => !granted.has(s));
      if (missing.length > 0) {
        throw new AuthChallenge(
          'INSUFFICIENT_SCOPE',
          `Forbidden: the token lacks the scope ${missing.join(' ')}`,
          challenge(`error="insufficient_scope"${scopeHint}`),
        );
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') {
        throw new AuthChallenge(
          'UNAUTHORIZED',
          'Unauthorized: the token names no subject',
          challenge('error="invalid_token", error_description="no sub claim"'),
        );
      }
      const principal = `${typeof payload.iss === 'string' ? payload.iss : defaultIssuer} ${payload.sub}`;
      // The token itself stays wrapped: only a token exchange for an upstream that acts for users unwraps it.
      return {
        principal,
        scopes: granted,
        caller: { principal, claims: { ...payload }, token: new SubjectToken(match[1]!) },
      };
    },

    ...toolScopePolicy(config, challenge),
  };
}

/** `auth.toolScopes`: the scopes a tools/call needs besides, by tool name; the same for every mode. */
function toolScopePolicy(
  config: AuthConfig,
  challenge: (params: string) => string,
): Pick<Authenticator, 'toolPolicy' | 'authorizeTool'> {
  const toolRules = config.toolScopes.map((rule) => ({
    matches: toolFilter({ allow: rule.tools }),
    scopes: rule.scopes,
  }));
  return {
    toolPolicy(identity) {
      if (toolRules.length === 0) return undefined;
      return (tool) => toolRules.every((r) => !r.matches(tool) || r.scopes.every((s) => identity.scopes.has(s)));
    },

    authorizeTool(identity, tool) {
      const missing = toolRules
        .filter((r) => r.matches(tool))
        .flatMap((r) => r.scopes.filter((s) => !identity.scopes.has(s)));
      if (missing.length === 0) return;
      const needed = [...new Set(missing)].join(' ');
      throw new AuthChallenge(
        'INSUFFICIENT_SCOPE',
        `Forbidden: calling ${tool} needs the scope ${needed}`,
        challenge(`error="insufficient_scope", scope="${needed}"`),
      );
    },
  };
}

/** auth.mode api-key: the principal is the key's name, its scopes the key's (see api-keys.ts). */
function apiKeyAuthenticator(config: AuthConfig): Authenticator {
  const verify = apiKeyVerifier(config);
  // No OAuth metadata to point at: a realm, and what went wrong.
  const challenge = (params: string) => `Bearer realm="mcp-gateway"${params ? `, ${params}` : ''}`;
  return {
    async authenticate(authorization) {
      const match = BEARER.exec(authorization ?? '');
      if (!match)
        throw new AuthChallenge(
          'UNAUTHORIZED',
          'Unauthorized: an API key is required (Authorization: Bearer <key>)',
          challenge(''),
        );
      const holder = verify(match[1]!);
      if (!holder)
        throw new AuthChallenge(
          'UNAUTHORIZED',
          'Unauthorized: the API key is not valid',
          challenge('error="invalid_token", error_description="unknown API key"'),
        );
      const missing = config.requiredScopes.filter((s) => !holder.scopes.has(s));
      if (missing.length > 0) {
        throw new AuthChallenge(
          'INSUFFICIENT_SCOPE',
          `Forbidden: the API key lacks the scope ${missing.join(' ')}`,
          challenge(`error="insufficient_scope", scope="${missing.join(' ')}"`),
        );
      }
      return { principal: holder.name, scopes: holder.scopes };
    },
    ...toolScopePolicy(config, challenge),
  };
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function jwtVerifier(config: AuthConfig, audience: string): (token: string) => Promise<TokenClaims> {
  const keys = createRemoteJWKSet(new URL(config.jwksUrl!));
  return async (token) => {
    try {
      // RFC 9068 requires exp of a JWT access token: one without it would be good forever.
      const { payload } = await jwtVerify(token, keys, {
        issuer: config.issuer!,
        audience,
        clockTolerance: config.clockToleranceSeconds,
        requiredClaims: ['exp'],
      });
      return payload satisfies JWTPayload;
    } catch (err) {
      // Keys that cannot be fetched are the issuer's outage, not the token's fault: a 503, not a 401.
      if (keysUnavailable(err)) {
        throw new GatewayError(
          'AUTHORIZATION_SERVER_UNAVAILABLE',
          "The issuer's signing keys (auth.jwksUrl) cannot be fetched right now",
          { retryAfterMs: 1000 },
        );
      }
      throw new InvalidToken(jwtRejection(err));
    }
  };
}

/** jose's own errors about the key set's endpoint (timeout, not JSON, not 200), or a fetch that failed outright. */
function keysUnavailable(err: unknown): boolean {
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid) return true;
  if (!(err instanceof joseErrors.JOSEError)) return err instanceof Error && !(err instanceof InvalidToken);
  return err.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/i.test(err.message);
}

function jwtRejection(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'the token has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return err.reason === 'missing'
      ? `the token has no ${err.claim} claim`
      : `the token's ${err.claim} claim is not accepted`;
  return 'the token is not valid';
}

/** RFC 7662 answers carry iss and aud only optionally: checked when present. */
function introspectionVerifier(
  config: AuthConfig,
  audience: string,
  log: Logger | undefined,
  diagnostics: DataPathEvents | undefined,
): (token: string) => Promise<TokenClaims> {
  const introspection = config.introspection!;
  const introspect = createIntrospector({
    ...introspection,
    log,
    onOutcome: (outcome) => diagnostics?.emit('token:introspection', { outcome }),
  });
  return async (token) => {
    const claims = await introspect(token);
    if (config.issuer !== undefined && claims.iss !== undefined && claims.iss !== config.issuer)
      throw new InvalidToken("the token's iss claim is not accepted");
    if (claims.aud !== undefined) {
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!audiences.includes(audience)) throw new InvalidToken("the token's aud claim is not accepted");
    }
    return claims;
  };
}

/** RFC 9728: the metadata of `https://host/mcp` lives at `https://host/.well-known/oauth-protected-resource/mcp`. */
function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/oauth-protected-resource${path}`;
}

/** Serves the protected resource metadata: what a client needs to find the authorization server. */
export function registerProtectedResourceMetadata(app: FastifyInstance, config: AuthConfig): void {
  // API keys come from whoever hands them out: no authorization server to point at.
  if (config.mode === 'none' || config.mode === 'api-key') return;
  // Every scope a challenge of this gateway can name: the required ones and each tool's.
  const scopes = [...new Set([...config.requiredScopes, ...config.toolScopes.flatMap((rule) => rule.scopes)])];
  const document = {
    resource: config.resource,
    authorization_servers: config.authorizationServers,
    bearer_methods_supported: ['header'],
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
  };
  const path = new URL(protectedResourceMetadataUrl(config.resource!)).pathname;
  // Both the path-specific location and the root one: clients try either.
  for (const p of new Set([path, '/.well-known/oauth-protected-resource'])) app.get(p, async () => document);
}
