/**
 * The browser's side of grant authorization-code: GET /oauth/start (the link a user's call was
 * answered with: a page to confirm, see oauth-consent.ts), POST /oauth/start (the confirmation:
 * a redirect to the upstream's authorization server, with PKCE) and GET
 * /oauth/callback (where that server sends the browser back with a code). And the user's own
 * DELETE /oauth/tokens/<upstream>, with their bearer token: the gateway forgets (and, where the
 * server can, revokes) the token it holds for them.
 *
 * The pages are for people: plain HTML, everything they show escaped, no script, no token, no
 * state. Their failures are the error table's (the HTTP status and the type in the page).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { OAuthClientConfig, UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { Authenticator } from '../contracts/authenticator.js';
import type { PendingAuthorization, TokenStore } from '../contracts/token-store.js';
import { replyWithFailure } from '../transport/error-reply.js';
import { AuthorizationCode } from '../upstream-auth/authorization-code.js';
import { ExchangeFailure } from '../contracts/exchange-failure.js';
import {
  browserDigest,
  clearConsentCookie,
  confirmPageBody,
  consentCookieName,
  csrfToken,
  escapeHtml,
  isSecure,
  newBrowserNonce,
  readCookie,
  sameText,
  setConsentCookie,
} from './oauth-consent.js';
import { redirectToLogin, registerLoginCallback, type BrowserLogin } from './oauth-login.js';
import { PAGE_HEADERS } from './page-headers.js';

export interface OAuthRoutesOptions {
  /** Sends on a 2025 session's GET stream, on whichever replica holds it. */
  notify: (session: string, message: JsonRpcMessage) => void;
  /**
   * The upstreams that run now (a reload changes them): the routes are always there, the grants are looked up per
   * request.
   */
  upstreams: () => readonly UpstreamConfig[];
  tokens: TokenStore | undefined;
  auth: Authenticator | undefined;
  /** auth.browserLogin (the sign-in before the upstream's server) and auth.resource. */
  login?: { browserLogin: BrowserLogin | undefined; resource: string | undefined };
  diagnostics: DataPathEvents;
}

type Form = Record<string, string | undefined>;

export function registerOAuthRoutes(app: FastifyInstance, options: OAuthRoutesOptions): void {
  const { tokens, auth, diagnostics, notify } = options;
  const login = options.login?.browserLogin;
  const resource = options.login?.resource;
  // One per upstream config object: a reload that replaces an upstream's config gets a new one.
  const built = new WeakMap<OAuthClientConfig, AuthorizationCode>();
  const grantOf = (name: string | undefined): { grant: AuthorizationCode; oauth: OAuthClientConfig } | undefined => {
    const u = options.upstreams().find((x) => x.name === name);
    if (!u || u.transport === 'stdio' || u.oauth?.grant !== 'authorization-code' || !tokens) return undefined;
    let grant = built.get(u.oauth);
    if (!grant) built.set(u.oauth, (grant = new AuthorizationCode(u.name, u.oauth, tokens)));
    return { grant, oauth: u.oauth };
  };
  const pendingOf = async (state: unknown, take: boolean) => {
    if (typeof state !== 'string' || state === '' || state.length > 256 || !tokens) return undefined;
    return take ? tokens.takePending(state) : tokens.getPending(state);
  };

  // The link: a page that says what is linked to whom, and a cookie for this browser. Nothing is granted yet.
  app.get<{ Querystring: Form }>('/oauth/start', async (request, reply) => {
    try {
      const state = request.query.state;
      const pending = await pendingOf(state, false);
      const found = pending && pending.browser === undefined ? grantOf(pending.upstream) : undefined;
      if (!pending || !found || state === undefined) throw new GatewayError('OAUTH_STATE_INVALID');
      const target = await found.grant.authorizeUrl(state, pending);
      const nonce = newBrowserNonce();
      const cookie = consentCookieName(state);
      setConsentCookie(reply, cookie, nonce, pending, isSecure(found.oauth.redirectUri));
      const body = confirmPageBody({
        state,
        csrf: csrfToken(nonce, state),
        principal: pending.principal,
        upstream: pending.upstream,
        serverHost: target.host,
      });
      // The form posts here, and its answer redirects to the authorization server: both must be allowed.
      const origins = [target.origin, ...(login ? [new URL(login.authorizationUrl).origin] : [])];
      const csp = PAGE_HEADERS['content-security-policy'].replace(
        "form-action 'none'",
        `form-action 'self' ${[...new Set(origins)].join(' ')}`,
      );
      return reply
        .code(200)
        .headers(PAGE_HEADERS)
        .header('content-security-policy', csp)
        .header('content-type', 'text/html; charset=utf-8')
        .send(body);
    } catch (err) {
      return failurePage(reply, err);
    }
  });

  // The confirmed (and, with auth.browserLogin, signed-in) browser goes to the upstream's authorization server.
  const proceed = async (reply: FastifyReply, confirmed: PendingAuthorization): Promise<FastifyReply> => {
    const found = grantOf(confirmed.upstream);
    if (!found || !tokens) throw new GatewayError('OAUTH_STATE_INVALID');
    const next = randomBytes(32).toString('base64url');
    await tokens.putPending(next, confirmed);
    const target = await found.grant.authorizeUrl(next, confirmed);
    return reply.headers(PAGE_HEADERS).redirect(target.href, 303);
  };
  const onward =
    login && tokens
      ? (reply: FastifyReply, confirmed: PendingAuthorization) =>
          redirectToLogin(reply.headers(PAGE_HEADERS), login, tokens, confirmed, resource)
      : proceed;
  registerConfirm(app, tokens, grantOf, pendingOf, onward);
  if (login && tokens && auth)
    registerLoginCallback(app, { login, tokens, auth, resource, proceed, fail: failurePage });

  registerCallback(app, grantOf, pendingOf, notify);
  registerRevoke(app, auth, grantOf, diagnostics);
}

type GrantOf = (name: string | undefined) => { grant: AuthorizationCode; oauth: OAuthClientConfig } | undefined;
type PendingOf = (state: unknown, take: boolean) => Promise<PendingAuthorization | undefined>;

/** GET /oauth/callback: the authorization server's answer, for the browser that confirmed the link. */
function registerCallback(
  app: FastifyInstance,
  grantOf: GrantOf,
  pendingOf: PendingOf,
  notify: OAuthRoutesOptions['notify'],
): void {
  app.get<{ Querystring: Form }>('/oauth/callback', async (request, reply) => {
    const { state, code, error, iss } = request.query;
    try {
      // Taken before anything else: a state works once, whatever the outcome.
      const pending = await pendingOf(state, true);
      const found =
        pending?.browser !== undefined && pending.loginVerifier === undefined ? grantOf(pending.upstream) : undefined;
      if (!pending || !found) throw new GatewayError('OAUTH_STATE_INVALID');
      const nonce = pending.cookie !== undefined ? readCookie(request, pending.cookie) : undefined;
      if (nonce === undefined || !sameText(browserDigest(nonce), pending.browser!))
        throw new GatewayError('OAUTH_CONSENT_INVALID');
      clearConsentCookie(reply, pending.cookie!, isSecure(found.oauth.redirectUri));
      await found.grant.checkIssuer(iss);
      if (typeof error === 'string') {
        const reason = error.replace(/[^\x20-\x7e]/g, '').slice(0, 64);
        throw new GatewayError(
          'UPSTREAM_IDENTITY_REFUSED',
          `The authorization server did not grant access to ${pending.upstream} (${reason})`,
          { upstream: pending.upstream, reason },
        );
      }
      if (typeof code !== 'string' || code === '')
        throw new GatewayError('OAUTH_REQUEST_INVALID', 'The authorization server sent neither a code nor an error');
      await found.grant.complete(pending, code);
      // 2025-11-25: the session that was asked may retry now (the client matches the elicitationId).
      if (pending.session !== undefined)
        notify(pending.session, {
          jsonrpc: '2.0',
          method: 'notifications/elicitation/complete',
          params: { elicitationId: pending.elicitationId },
        });
      return page(
        reply,
        200,
        'Authorized',
        `${pending.upstream} can now act as you. You can close this window and try again in your client.`,
      );
    } catch (err) {
      return failurePage(reply, err);
    }
  });
}

/** DELETE /oauth/tokens/<upstream>: the caller's own token for that upstream, forgotten and revoked. */
function registerRevoke(
  app: FastifyInstance,
  auth: Authenticator | undefined,
  grantOf: GrantOf,
  diagnostics: DataPathEvents,
): void {
  app.delete<{ Params: { upstream: string } }>('/oauth/tokens/:upstream', async (request, reply) => {
    try {
      if (!auth) throw new GatewayError('OAUTH_REQUEST_INVALID', 'Auth is off: no token is held for anyone');
      const identity = await auth.authenticate(request.headers.authorization);
      const found = grantOf(request.params.upstream);
      if (!found)
        throw new GatewayError(
          'OAUTH_UPSTREAM_UNKNOWN',
          `No upstream named ${JSON.stringify(request.params.upstream.slice(0, 64))} takes authorizations from ` +
            `its users`,
        );
      const { held, revokedAtServer } = await found.grant.revoke(identity.principal);
      return reply
        .header('cache-control', 'no-store')
        .send({ upstream: request.params.upstream, revoked: held, revokedAtServer });
    } catch (err) {
      replyWithFailure(
        reply,
        diagnostics,
        err instanceof ExchangeFailure ? new GatewayError('UPSTREAM_UNAVAILABLE', err.message) : err,
      );
      return reply;
    }
  });
}

/** POST /oauth/start: only from the browser that was shown the page; the link's state is spent here. */
function registerConfirm(
  app: FastifyInstance,
  tokens: TokenStore | undefined,
  grantOf: GrantOf,
  pendingOf: PendingOf,
  onward: (reply: FastifyReply, confirmed: PendingAuthorization) => Promise<FastifyReply>,
): void {
  app.register(async (plugin) => {
    plugin.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(String(body))));
      },
    );
    plugin.post<{ Body: Form | undefined }>('/oauth/start', async (request, reply) => {
      try {
        const form: Form = request.body && typeof request.body === 'object' ? request.body : {};
        const state = form.state;
        if (typeof state !== 'string' || state === '' || state.length > 256)
          throw new GatewayError('OAUTH_STATE_INVALID');
        const cookie = consentCookieName(state);
        const nonce = readCookie(request, cookie);
        if (nonce === undefined || typeof form.csrf !== 'string' || !sameText(form.csrf, csrfToken(nonce, state)))
          throw new GatewayError('OAUTH_CONSENT_INVALID');
        const pending = await pendingOf(state, true);
        const found = pending && pending.browser === undefined ? grantOf(pending.upstream) : undefined;
        if (!pending || !found) throw new GatewayError('OAUTH_STATE_INVALID');
        return await onward(reply, { ...pending, browser: browserDigest(nonce), cookie });
      } catch (err) {
        return failurePage(reply, err);
      }
    });
  });
}

function failurePage(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof GatewayError)
    return page(
      reply,
      err.entry.httpStatus === 200 ? 502 : err.entry.httpStatus,
      'Not authorized',
      err.message,
      err.type,
    );
  if (err instanceof ExchangeFailure)
    return page(
      reply,
      502,
      'Not authorized',
      'The authorization server cannot be reached right now: try again later.',
      'UPSTREAM_UNAVAILABLE',
    );
  reply.log.error({ err }, 'oauth callback failure');
  return page(reply, 500, 'Not authorized', 'Something went wrong on the gateway.', 'INTERNAL_ERROR');
}

function page(reply: FastifyReply, status: number, title: string, text: string, type?: string): FastifyReply {
  const head = `<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`;
  const style = 'font-family:sans-serif;max-width:40em;margin:3em auto';
  const small = type ? `<p><small>${escapeHtml(type)}</small></p>` : '';
  const body =
    `<!doctype html><html lang="en">${head}<body style="${style}">` +
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${small}</body></html>`;
  return reply.code(status).headers(PAGE_HEADERS).header('content-type', 'text/html; charset=utf-8').send(body);
}
