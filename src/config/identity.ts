/**
 * Identity towards upstreams, across sections: an upstream that calls as each user (a token
 * exchange, the user's own OAuth token, headers from the token's claims) needs auth on to know
 * the user, transport http, and (with Redis) the keys its tokens are sealed with. Either mode
 * works: shared workers send each call as its user; per-session workers are opened as theirs.
 */
import type { AuthConfig } from './auth.js';
import type { HttpUpstreamConfig } from './remote-upstream.js';
import { usesClaims } from './remote-upstream.js';
import type { SecretsConfig } from './secrets.js';
import type { SessionsConfig } from './sessions.js';

interface Sections {
  auth: AuthConfig;
  sessions: SessionsConfig;
  secrets?: SecretsConfig | undefined;
  upstreams: unknown;
}

export function identityChecks(config: Sections, problems: string[]): void {
  const upstreams = Array.isArray(config.upstreams)
    ? (config.upstreams as Array<Partial<HttpUpstreamConfig> | null>)
    : [];
  const authOn = typeof config.auth === 'object' && config.auth !== null && config.auth.mode !== 'none';
  let perUser = false;
  upstreams.forEach((u, i) => {
    if (typeof u !== 'object' || u === null || (u.transport !== 'http' && u.transport !== 'sse')) return;
    const at = `upstreams[${i}]`;
    const grant = typeof u.oauth === 'object' && u.oauth !== null ? u.oauth.grant : undefined;
    const userGrant = grant === 'token-exchange' || grant === 'authorization-code';
    const claims = usesClaims(u);
    if (!userGrant && u.discovery === 'anonymous')
      problems.push(`${at}.discovery: applies to oauth.grant token-exchange or authorization-code only`);
    if (grant === 'authorization-code') authorizationCodeChecks(u as HttpUpstreamConfig, config.auth, at, problems);
    if (!userGrant && !claims) return;
    perUser ||= userGrant;
    const what = userGrant ? `${at}.oauth.grant ${grant}` : `${at}.headers with \${claims.…}`;
    if (!authOn) problems.push(`${what}: needs auth.mode jwt or introspection (the gateway must know who calls)`);
    if (u.transport === 'sse') problems.push(`${what}: needs transport http`);
  });
  const redis = typeof config.sessions === 'object' && config.sessions !== null && config.sessions.store === 'redis';
  const keys =
    typeof config.secrets === 'object' && config.secrets !== null && Array.isArray(config.secrets.keys)
      ? config.secrets.keys
      : [];
  if (perUser && redis && keys.length === 0) {
    problems.push(
      'secrets.keys: is required when sessions.store is "redis" and an upstream holds tokens for users ' +
        '(token-exchange, authorization-code: they are sealed with these keys)',
    );
  }
}

/** The gateway's callback must be reachable by browsers: configured, or at the origin clients reach the gateway at. */
function authorizationCodeChecks(u: HttpUpstreamConfig, auth: AuthConfig, at: string, problems: string[]): void {
  const resource = typeof auth === 'object' && auth !== null ? auth.resource : undefined;
  if (u.oauth?.redirectUri === undefined && resource === undefined) {
    problems.push(
      `${at}.oauth.redirectUri: is required with grant authorization-code when auth.resource is not set (where ` +
        `browsers reach the gateway's /oauth/callback)`,
    );
  }
  // Settled here, so the upstream layer never needs the auth section.
  if (u.oauth && u.oauth.redirectUri === undefined && resource !== undefined)
    u.oauth.redirectUri = new URL('/oauth/callback', resource).href;
  if (u.oauth?.actorToken !== undefined || u.oauth?.audience !== undefined)
    problems.push(`${at}.oauth: audience and actorToken apply to grant token-exchange only`);
}
