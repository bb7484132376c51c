/**
 * The browser's side of grant authorization-code: GET /oauth/start (the link a user's call was
 * answered with: a redirect to the upstream's authorization server, with PKCE) and GET
 * /oauth/callback (where that server sends the browser back with a code). And the user's own
 * DELETE /oauth/tokens/<upstream>, with their bearer token: the gateway forgets (and, where the
 * server can, revokes) the token it holds for them.
 *
 * The pages are for people: plain HTML, everything they show escaped, no script, no token, no
 * state. Their failures are the error table's (the HTTP status and the type in the page).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GatewayConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { Authenticator } from '../contracts/authenticator.js';
import type { TokenStore } from '../contracts/token-store.js';
import { replyWithFailure } from '../transport/error-reply.js';
import { AuthorizationCode } from '../upstream/authorization-code.js';
import { ExchangeFailure } from '../upstream/retry-policy.js';

const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // The callback's URL holds the code: no page it leads to may hear of it.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

export interface OAuthRoutesOptions {
  /** Sends on a 2025 session's GET stream, on whichever replica holds it. */
  notify: (session: string, message: JsonRpcMessage) => void;
  config: GatewayConfig;
  tokens: TokenStore | undefined;
  auth: Authenticator | undefined;
  diagnostics: DataPathEvents;
}

export function registerOAuthRoutes(app: FastifyInstance, options: OAuthRoutesOptions): void {
  const { config, tokens, auth, diagnostics, notify } = options;
  const grants = new Map<string, AuthorizationCode>();
  for (const u of config.upstreams) {
    if (u.transport !== 'stdio' && u.oauth?.grant === 'authorization-code' && tokens) grants.set(u.name, new AuthorizationCode(u.name, u.oauth, tokens));
  }
  if (grants.size === 0 || !tokens) return;

  app.get<{ Querystring: Record<string, string | undefined> }>('/oauth/start', async (request, reply) => {
    try {
      const state = request.query.state;
      const pending = typeof state === 'string' && state !== '' ? await tokens.getPending(state) : undefined;
      const grant = pending && grants.get(pending.upstream);
      if (!pending || !grant || state === undefined) throw new GatewayError('OAUTH_STATE_INVALID');
      const target = await grant.authorizeUrl(state, pending);
      return reply.headers(PAGE_HEADERS).redirect(target.href, 302);
    } catch (err) {
      return failurePage(reply, err);
    }
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/oauth/callback', async (request, reply) => {
    const { state, code, error } = request.query;
    try {
      // Taken before anything else: a state works once, whatever the outcome.
      const pending = typeof state === 'string' && state !== '' ? await tokens.takePending(state) : undefined;
      const grant = pending && grants.get(pending.upstream);
      if (!pending || !grant) throw new GatewayError('OAUTH_STATE_INVALID');
      if (typeof error === 'string') {
        const reason = error.replace(/[^\x20-\x7e]/g, '').slice(0, 64);
        throw new GatewayError('UPSTREAM_IDENTITY_REFUSED', `The authorization server did not grant access to ${pending.upstream} (${reason})`, { upstream: pending.upstream, reason });
      }
      if (typeof code !== 'string' || code === '') throw new GatewayError('OAUTH_REQUEST_INVALID', 'The authorization server sent neither a code nor an error');
      await grant.complete(pending, code);
      // 2025-11-25: the session that was asked may retry now (the client matches the elicitationId).
      if (pending.session !== undefined) notify(pending.session, { jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId: pending.elicitationId } });
      return page(reply, 200, 'Authorized', `${pending.upstream} can now act as you. You can close this window and try again in your client.`);
    } catch (err) {
      return failurePage(reply, err);
    }
  });

  app.delete<{ Params: { upstream: string } }>('/oauth/tokens/:upstream', async (request, reply) => {
    try {
      if (!auth) throw new GatewayError('OAUTH_REQUEST_INVALID', 'Auth is off: no token is held for anyone');
      const identity = await auth.authenticate(request.headers.authorization);
      const grant = grants.get(request.params.upstream);
      if (!grant) throw new GatewayError('OAUTH_UPSTREAM_UNKNOWN', `No upstream named ${JSON.stringify(request.params.upstream.slice(0, 64))} takes authorizations from its users`);
      const { held, revokedAtServer } = await grant.revoke(identity.principal);
      return reply.header('cache-control', 'no-store').send({ upstream: request.params.upstream, revoked: held, revokedAtServer });
    } catch (err) {
      replyWithFailure(reply, diagnostics, err instanceof ExchangeFailure ? new GatewayError('UPSTREAM_UNAVAILABLE', err.message) : err);
      return reply;
    }
  });
}

function failurePage(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof GatewayError) return page(reply, err.entry.httpStatus === 200 ? 502 : err.entry.httpStatus, 'Not authorized', err.message, err.type);
  if (err instanceof ExchangeFailure) return page(reply, 502, 'Not authorized', 'The authorization server cannot be reached right now: try again later.', 'UPSTREAM_UNAVAILABLE');
  reply.log.error({ err }, 'oauth callback failure');
  return page(reply, 500, 'Not authorized', 'Something went wrong on the gateway.', 'INTERNAL_ERROR');
}

function page(reply: FastifyReply, status: number, title: string, text: string, type?: string): FastifyReply {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif;max-width:40em;margin:3em auto"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${type ? `<p><small>${escapeHtml(type)}</small></p>` : ''}</body></html>`;
  return reply.code(status).headers(PAGE_HEADERS).header('content-type', 'text/html; charset=utf-8').send(body);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
