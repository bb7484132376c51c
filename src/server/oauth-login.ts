/**
 * The optional identity check of /oauth/start's confirmation (`auth.browserLogin`): before the
 * browser goes to the upstream's authorization server, it signs in at the gateway's own (the one
 * clients get the gateway's tokens from), by the authorization code grant with PKCE. The token it
 * gets is checked by the gateway's own authenticator, as a client's would be; the flow goes on
 * only when its principal is the one the link was made for (the spec's "the user who completes
 * the flow is the one who started it", by their authoritative subject rather than a page's text).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuthConfig } from '../config/auth.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import type { Authenticator } from '../contracts/authenticator.js';
import type { PendingAuthorization, TokenStore } from '../contracts/token-store.js';
import { OAuthTokenEndpoint, TokenEndpointFailure } from '../upstream-auth/oauth-token-endpoint.js';
import { browserDigest, readCookie, sameText } from './oauth-consent.js';

const TOKEN_TIMEOUT_MS = 10_000;

export type BrowserLogin = NonNullable<AuthConfig['browserLogin']>;

export interface LoginRoutes {
  login: BrowserLogin;
  tokens: TokenStore;
  auth: Authenticator;
  resource: string | undefined;
  /** The confirmed, signed-in pending goes on to the upstream's authorization server. */
  proceed: (reply: FastifyReply, pending: PendingAuthorization) => Promise<FastifyReply>;
  fail: (reply: FastifyReply, err: unknown) => FastifyReply;
}

/** Sends the confirmed browser to sign in at the gateway's authorization server first. */
export async function redirectToLogin(
  reply: FastifyReply,
  login: BrowserLogin,
  tokens: TokenStore,
  confirmed: PendingAuthorization,
  resource: string | undefined,
): Promise<FastifyReply> {
  const state = randomBytes(32).toString('base64url');
  const loginVerifier = randomBytes(32).toString('base64url');
  await tokens.putPending(state, { ...confirmed, loginVerifier });
  const url = new URL(login.authorizationUrl);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: login.clientId,
    redirect_uri: login.redirectUri!,
    state,
    code_challenge: createHash('sha256').update(loginVerifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: login.scopes.join(' '),
  };
  if (resource !== undefined) params.resource = resource;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return reply.redirect(url.href, 303);
}

/** GET /oauth/login/callback: the sign-in's code; its token must be the link's principal's. */
export function registerLoginCallback(app: FastifyInstance, o: LoginRoutes): void {
  const endpoint = new OAuthTokenEndpoint(o.login.tokenUrl, o.login, TOKEN_TIMEOUT_MS);
  app.get<{ Querystring: Record<string, string | undefined> }>('/oauth/login/callback', async (request, reply) => {
    const { state, code, error } = request.query;
    try {
      const pending =
        typeof state === 'string' && state !== '' && state.length <= 256
          ? await o.tokens.takePending(state)
          : undefined;
      if (
        !pending ||
        pending.loginVerifier === undefined ||
        pending.browser === undefined ||
        pending.cookie === undefined
      )
        throw new GatewayError('OAUTH_STATE_INVALID');
      const nonce = readCookie(request, pending.cookie);
      if (nonce === undefined || !sameText(browserDigest(nonce), pending.browser))
        throw new GatewayError('OAUTH_CONSENT_INVALID');
      if (typeof error === 'string' || typeof code !== 'string' || code === '')
        throw new GatewayError(
          'OAUTH_CONSENT_INVALID',
          'The sign-in did not complete: open the link your own client gave you again',
        );
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: o.login.redirectUri!,
        code_verifier: pending.loginVerifier,
      });
      if (o.resource !== undefined) form.set('resource', o.resource);
      const answer = await endpoint.post(form).catch((err: unknown) => {
        if (err instanceof TokenEndpointFailure && err.status === 400)
          throw new GatewayError(
            'OAUTH_CONSENT_INVALID',
            'The sign-in was refused: open the link your own client gave you again',
          );
        throw new GatewayError(
          'UPSTREAM_UNAVAILABLE',
          'The sign-in server cannot be reached right now: try again later',
        );
      });
      const accessToken = isObject(answer) && typeof answer.access_token === 'string' ? answer.access_token : undefined;
      if (accessToken === undefined)
        throw new GatewayError('UPSTREAM_UNAVAILABLE', 'The sign-in server answered without an access token');
      const identity = await o.auth.authenticate(`Bearer ${accessToken}`).catch(() => {
        throw new GatewayError('OAUTH_CONSENT_INVALID', 'The sign-in gave a token the gateway does not accept');
      });
      if (identity.principal !== pending.principal) {
        throw new GatewayError(
          'OAUTH_CONSENT_INVALID',
          'You signed in as someone else than the user this link was made for: nothing was linked',
        );
      }
      const { loginVerifier: _done, ...next } = pending;
      return await o.proceed(reply, next);
    } catch (err) {
      return o.fail(reply, err);
    }
  });
}
