/**
 * The consent binding of /oauth/start (MCP 2025-11-25 URL-mode elicitation, "Phishing": the user
 * who completes the flow must be the one who started it). A link opened links nothing: it shows
 * a page naming the principal and the upstream, with a form that only the browser shown the page
 * can post (its cookie and the form's token); the post spends the link; the callback is taken
 * only from that browser. Real authorization server, gateway and upstream on loopback.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolText, type RunningGateway } from '../support/gateway.js';
import type { AuthorizationServer } from '../support/authorization-server.js';
import type { JwtIssuer } from '../support/jwt-issuer.js';
import {
  confirm,
  connectAsUser,
  linkedConfig,
  linkOf,
  type LinkRig,
  openLink,
  postConfirm,
  type Seen,
  startGatewayOn,
  startLinkRig,
} from '../support/oauth-browser.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let gw: RunningGateway;
let port: number;
let rig: LinkRig;
const seen: Seen[] = [];

const connect = (sub: string): Promise<Client> => connectAsUser(issuer, sub, gw);

async function approve(authorize: URL, user: string): Promise<URL> {
  const approved = await fetch(authorize, { redirect: 'manual', headers: { 'x-test-user': user } });
  expect(approved.status).toBe(302);
  return new URL(approved.headers.get('location')!);
}

const callback = async (url: URL, cookie?: string) => {
  const res = await fetch(url, { redirect: 'manual', ...(cookie ? { headers: { cookie } } : {}) });
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  rig = await startLinkRig(seen);
  ({ as, issuer, port } = rig);
  gw = await startGatewayOn(linkedConfig(rig), port);
});
afterAll(async () => {
  await gw?.stop();
  await rig?.close();
});

describe('/oauth/start asks before it links', () => {
  it('the link opens a page naming the principal and the upstream, sets an HttpOnly SameSite=Lax cookie, and sends nobody to the authorization server', async () => {
    const alice = await connect('alice');
    const opened = await openLink(await linkOf(alice));
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/^text\/html/);
    expect(opened.headers.get('location')).toBeNull();
    expect(opened.page).toContain(' alice</strong>');
    expect(opened.page).toContain('<strong>crm</strong>');
    expect(opened.page).toContain(new URL(as.issuer).host);
    expect(opened.page).not.toContain(opened.cookie.split('=')[1]);
    const setCookie = opened.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      /^mcpgw_consent_[A-Za-z0-9_-]{16}=[A-Za-z0-9_-]{43}; Path=\/oauth; Max-Age=\d+; HttpOnly; SameSite=Lax$/,
    );
    // The form may post here and be redirected to the authorization server, nowhere else; no frame, no script.
    expect(opened.headers.get('content-security-policy')).toContain(`form-action 'self' ${new URL(as.issuer).origin}`);
    expect(opened.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(opened.page).not.toContain('<script');
    expect(as.codes.get('alice')).toBeUndefined();
    await alice.close();
  });
});

describe('a link forwarded to someone else', () => {
  it("cannot link silently: a post without the page's cookie, with another browser's cookie, or with a wrong token is refused (403), and the link still works for its user", async () => {
    const alice = await connect('alice2');
    const url = await linkOf(alice);
    const { form } = await openLink(url);
    // A cross-site page posting the form (SameSite=Lax: no cookie), or bob's browser with its own cookie for this link.
    const noCookie = await postConfirm(url, form);
    expect(noCookie.status).toBe(403);
    expect(await noCookie.text()).toContain('OAUTH_CONSENT_INVALID');
    const bob = await openLink(url);
    expect(bob.page).toContain(' alice2</strong>');
    const mixed = await postConfirm(url, form, bob.cookie);
    expect(mixed.status).toBe(403);
    const guessed = await postConfirm(url, { state: form.state, csrf: 'x'.repeat(43) }, bob.cookie);
    expect(guessed.status).toBe(403);
    // A form post without a state, or a body that is no form: typed errors, nothing spent.
    expect((await postConfirm(url, {}, bob.cookie)).status).toBe(400);
    const json = await fetch(new URL('/oauth/start', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(400);
    expect(as.codes.get('alice2')).toBeUndefined();
    await expect(alice.callTool({ name: 'crm__whoami', arguments: {} })).rejects.toBeInstanceOf(
      UrlElicitationRequiredError,
    );

    // Alice's own browser, with its page's cookie and token, goes on.
    const mine = await confirm(url);
    const back = await approve(mine.authorize, 'alice2');
    expect((await callback(back, mine.cookie)).status).toBe(200);
    expect(toolText(await alice.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are alice2');
    await alice.close();
  });
});

describe('replay', () => {
  it('a confirmed link is spent: posting it again or opening it again is refused; the callback is taken only from the browser that confirmed', async () => {
    const carol = await connect('carol');
    const url = await linkOf(carol);
    const flow = await confirm(url);
    // The same form again, from the same browser: the link's state is spent.
    const again = await postConfirm(url, flow.form, flow.cookie);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('OAUTH_STATE_INVALID');
    expect((await openLink(url)).status).toBe(400);
    // The link's own state is never good at the callback.
    expect((await callback(new URL(`/oauth/callback?state=${flow.form.state}&code=x`, url), flow.cookie)).status).toBe(
      400,
    );

    // The code comes back to another browser (no cookie, or another one): refused, and that flow is spent.
    const back = await approve(flow.authorize, 'carol');
    const elsewhere = await callback(back);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.text).toContain('OAUTH_CONSENT_INVALID');
    expect((await callback(back, flow.cookie)).status).toBe(400);
    await expect(carol.callTool({ name: 'crm__whoami', arguments: {} })).rejects.toBeInstanceOf(
      UrlElicitationRequiredError,
    );

    // A browser with the right cookie name but another value.
    const url2 = await linkOf(carol);
    const flow2 = await confirm(url2);
    const back2 = await approve(flow2.authorize, 'carol');
    const [name] = flow2.cookie.split('=');
    expect((await callback(back2, `${name}=${'A'.repeat(43)}`)).status).toBe(403);
    expect(as.codes.get('carol')).toBeUndefined();
    await carol.close();
  });
});
