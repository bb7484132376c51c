import { createHash } from 'node:crypto';
import { GatewayError } from '../../jsonrpc/errors.js';
import { OAuthTokenEndpoint } from '../../upstream-auth/oauth-token-endpoint.js';
import type { Logger } from '../../observability/logger.js';

/** What a verified token says, whichever way it was verified (a JWT's claims, an introspection response). */
export interface TokenClaims {
  iss?: unknown;
  sub?: unknown;
  scope?: unknown;
  aud?: unknown;
  exp?: unknown;
}

/** The token is not accepted; `reason` is safe to show the client. */
export class InvalidToken extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface IntrospectionOptions {
  /** The authorization server's RFC 7662 endpoint. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** How long an answer is reused (never past the token's exp). */
  cacheSeconds: number;
  timeoutMs: number;
  /** Answers kept at most (the oldest are forgotten first). */
  maxCached?: number;
  log?: Logger;
  /** Each question's outcome, for the metric. */
  onOutcome?: (outcome: 'active' | 'inactive' | 'failed') => void;
}

type Answer = { claims: TokenClaims; until: number } | { invalid: string; until: number };

/**
 * Opaque access tokens, checked by asking the authorization server (RFC 7662). Answers are cached
 * by a hash of the token, so a client's requests cost one introspection per `cacheSeconds`, and
 * concurrent requests with one token share one question. An unreachable or failing server is a
 * 503 for the client (retryable), never a 401: the token may well be good.
 */
export function createIntrospector(options: IntrospectionOptions): (token: string) => Promise<TokenClaims> {
  const cache = new Map<string, Answer>();
  const asking = new Map<string, Promise<Answer>>();
  const maxCached = options.maxCached ?? 10_000;
  // After a failure, uncached tokens fail fast for a second: an outage must not turn every
  // request into one more question to a server that is already failing.
  let downUntil = 0;
  let failing = false;
  const endpoint = new OAuthTokenEndpoint(options.url, options, options.timeoutMs);

  const remember = (key: string, answer: Answer) => {
    cache.delete(key);
    cache.set(key, answer);
    if (cache.size > maxCached) cache.delete(cache.keys().next().value!);
  };

  const ask = async (token: string, now: number): Promise<Answer> => {
    const until = now + options.cacheSeconds * 1000;
    if (now < downUntil) throw unavailableError();
    let body: Record<string, unknown>;
    try {
      body = await introspect(token);
    } catch (err) {
      options.onOutcome?.('failed');
      downUntil = Date.now() + 1000;
      if (!failing)
        options.log?.error(
          { introspection: options.url, reason: (err as Error).message },
          'token introspection failed: requests with new tokens get 503 until it works again',
        );
      failing = true;
      throw unavailableError();
    }
    if (failing) options.log?.info({ introspection: options.url }, 'token introspection works again');
    failing = false;
    options.onOutcome?.(body.active === true ? 'active' : 'inactive');
    if (body.active !== true) return { invalid: 'the token is not active', until };
    if (typeof body.exp === 'number' && body.exp * 1000 <= now) return { invalid: 'the token has expired', until };
    return { claims: body, until: typeof body.exp === 'number' ? Math.min(until, body.exp * 1000) : until };
  };

  const introspect = async (token: string): Promise<Record<string, unknown>> => {
    let body: unknown;
    try {
      body = await endpoint.post(new URLSearchParams({ token, token_type_hint: 'access_token' }));
    } catch (err) {
      // 401/403 here means the gateway's own client credentials are refused: the operator's problem.
      throw unavailable((err as Error).message);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw unavailable('answered JSON that is not an object');
    return body as Record<string, unknown>;
  };

  const unavailable = (why: string) => new Error(`the introspection endpoint ${why}`);
  const unavailableError = () =>
    new GatewayError(
      'AUTHORIZATION_SERVER_UNAVAILABLE',
      'The authorization server cannot check tokens right now: retry later',
    );

  return async (token) => {
    const key = createHash('sha256').update(token).digest('base64url');
    const now = Date.now();
    let answer = cache.get(key);
    if (!answer || answer.until <= now) {
      let pending = asking.get(key);
      if (!pending) {
        pending = ask(token, now).finally(() => asking.delete(key));
        asking.set(key, pending);
      }
      answer = await pending;
      remember(key, answer);
    }
    if ('invalid' in answer) throw new InvalidToken(answer.invalid);
    return answer.claims;
  };
}
