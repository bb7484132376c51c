/**
 * The consent binding of /oauth/start (MCP 2025-11-25, URL-mode elicitation, "Phishing": the
 * user who completes the flow must be the one who started it). A link alone links nothing: its
 * GET shows who is being linked to what, and sets a cookie in that browser (random, HttpOnly,
 * SameSite=Lax, Path=/oauth, as long as the link lives); only a POST of that page's form, with a
 * token derived from that cookie, goes on to the authorization server, under a new state that is
 * bound to the cookie. The link's own state is taken by that POST (a second one, or the link
 * opened again, is refused), and /oauth/callback accepts the new state only from the browser
 * holding that cookie.
 *
 * What it cannot do: know who the person at the browser is. The page names the principal that
 * asked; someone else who reads it and still confirms grants their account to that principal.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PendingAuthorization } from '../contracts/token-store.js';

const COOKIE_PREFIX = 'mcpgw_consent_';

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** One cookie per link, so two links open at once (two upstreams) do not overwrite each other's. */
export function consentCookieName(state: string): string {
  return COOKIE_PREFIX + sha256(state).slice(0, 16);
}

export function newBrowserNonce(): string {
  return randomBytes(32).toString('base64url');
}

/** The form's token: tied to the cookie and the link (a page for one link posts nothing for another). */
export function csrfToken(nonce: string, state: string): string {
  return sha256(`csrf.${nonce}.${state}`);
}

/** What a confirmed pending stores of the browser: never the cookie itself. */
export function browserDigest(nonce: string): string {
  return sha256(`browser.${nonce}`);
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function setConsentCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  pending: PendingAuthorization,
  secure: boolean,
): void {
  const maxAge = Math.max(0, Math.ceil((pending.expiresAt - Date.now()) / 1000));
  reply.header(
    'set-cookie',
    `${name}=${value}; Path=/oauth; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  );
}

export function clearConsentCookie(reply: FastifyReply, name: string, secure: boolean): void {
  reply.header('set-cookie', `${name}=; Path=/oauth; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
}

/** Whether the browser is sent its cookies with the Secure attribute (the gateway is reached over https). */
export function isSecure(redirectUri: string | undefined): boolean {
  return redirectUri?.startsWith('https:') === true;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface ConfirmPage {
  state: string;
  csrf: string;
  principal: string;
  upstream: string;
  /** The authorization server's host, where the user signs in next. */
  serverHost: string;
}

/** The page a link opens: what is linked to whom, and one button that posts the form. */
export function confirmPageBody(p: ConfirmPage): string {
  const e = escapeHtml;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorize ${e(p.upstream)}</title></head>` +
    '<body style="font-family:sans-serif;max-width:40em;margin:3em auto">' +
    `<h1>Authorize ${e(p.upstream)}</h1>` +
    `<p>The gateway asks to act as you at <strong>${e(p.upstream)}</strong>, for the gateway user ` +
    `<strong>${e(p.principal)}</strong>. ` +
    `You will sign in at <strong>${e(p.serverHost)}</strong> next.</p>` +
    `<p>Go on only if you are ${e(p.principal)} and you asked for this in your own client just now. ` +
    `If someone sent you this link, close this page: whoever goes on grants their own account to ` +
    `${e(p.principal)}.</p>` +
    `<form method="post" action="/oauth/start"><input type="hidden" name="state" value="${e(p.state)}">` +
    `<input type="hidden" name="csrf" value="${e(p.csrf)}">` +
    `<button type="submit">I am ${e(p.principal)}: authorize ${e(p.upstream)}</button></form></body></html>`
  );
}
