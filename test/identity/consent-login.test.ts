/**
 * auth.browserLogin (issue 19, consent binding's identity check): after the link's page is
 * confirmed, the browser signs in at the gateway's own authorization server (code + PKCE), and
 * the flow goes on to the upstream's server only when the token it got is, by the gateway's own
 * authenticator, the principal the link was made for. Here that server is a small one on
 * loopback that signs the user its "browser" names as the test's JWT issuer would.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { toolText, type RunningGateway } from '../support/gateway.js';
import type { AuthorizationServer } from '../support/authorization-server.js';
import type { JwtIssuer } from '../support/jwt-issuer.js';
import {
  confirm,
  connectAsUser,
  linkedConfig,
  linkOf,
  type LinkRig,
  type Seen,
  startGatewayOn,
  startLinkRig,
} from '../support/oauth-browser.js';
import { startLoginServer } from '../support/login-server.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let loginServer: Server;
let gw: RunningGateway;
let port: number;
let rig: LinkRig;
const seen: Seen[] = [];

beforeAll(async () => {
  rig = await startLinkRig(seen);
  ({ as, issuer, port } = rig);
  loginServer = await startLoginServer(issuer);
  const login = `http://127.0.0.1:${(loginServer.address() as AddressInfo).port}`;
  const browserLogin = {
    authorizationUrl: `${login}/authorize`,
    tokenUrl: `${login}/token`,
    clientId: 'gw-browser',
    clientSecret: 's',
    redirectUri: `http://127.0.0.1:${port}/oauth/login/callback`,
  };
  gw = await startGatewayOn(linkedConfig(rig, { auth: { ...issuer.authConfig, browserLogin } }), port);
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([rig?.close(), new Promise((r) => loginServer?.close(r))]);
});

const connect = (sub: string): Promise<Client> => connectAsUser(issuer, sub, gw);

/** The browser at an authorization server's /authorize as `user`, and back at the gateway with its cookie. */
async function signIn(authorize: URL, user: string, cookie: string): Promise<Response> {
  const approved = await fetch(authorize, { redirect: 'manual', headers: { 'x-test-user': user } });
  expect(approved.status).toBe(302);
  return fetch(approved.headers.get('location')!, { redirect: 'manual', headers: { cookie } });
}

describe('auth.browserLogin', () => {
  it("the confirmed browser signs in at the gateway's server first; as the link's principal it goes on and links", async () => {
    const alice = await connect('alice');
    const flow = await confirm(await linkOf(alice));
    expect(flow.authorize.pathname).toBe('/authorize');
    expect(flow.authorize.port).toBe(String((loginServer.address() as AddressInfo).port));
    expect(Object.fromEntries(flow.authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'gw-browser',
      code_challenge_method: 'S256',
      scope: 'openid',
      resource: issuer.authConfig.resource,
    });
    expect(flow.pageHeaders.get('content-security-policy')).toContain(flow.authorize.origin);
    const loggedIn = await signIn(flow.authorize, 'alice', flow.cookie);
    expect(loggedIn.status).toBe(303);
    const upstreamAuthorize = new URL(loggedIn.headers.get('location')!);
    expect(upstreamAuthorize.origin + upstreamAuthorize.pathname).toBe(`${as.issuer}/authorize`);
    const done = await signIn(upstreamAuthorize, 'alice', flow.cookie);
    expect(done.status).toBe(200);
    expect(toolText(await alice.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are alice');
    await alice.close();
  });

  it('someone else who opens a forwarded link and confirms it signs in as themselves: refused (403), nothing linked, the flow spent', async () => {
    const alice = await connect('alice-2');
    const flow = await confirm(await linkOf(alice));
    const asBob = await signIn(flow.authorize, 'bob', flow.cookie);
    expect(asBob.status).toBe(403);
    const page = await asBob.text();
    expect(page).toContain('OAUTH_CONSENT_INVALID');
    expect(page).toContain('signed in as someone else');
    expect(asBob.headers.get('location')).toBeNull();
    expect(as.codes.get('bob')).toBeUndefined();
    await expect(alice.callTool({ name: 'crm__whoami', arguments: {} })).rejects.toBeInstanceOf(
      UrlElicitationRequiredError,
    );
    // The sign-in's state works once; the upstream's callback takes no state still signing in.
    const again = await fetch(
      new URL(`/oauth/login/callback?state=${flow.authorize.searchParams.get('state')}&code=x`, gw.base),
      { headers: { cookie: flow.cookie } },
    );
    expect(again.status).toBe(400);
    const flow2 = await confirm(await linkOf(alice));
    expect(
      (
        await fetch(new URL(`/oauth/callback?state=${flow2.authorize.searchParams.get('state')}&code=x`, gw.base), {
          headers: { cookie: flow2.cookie },
        })
      ).status,
    ).toBe(400);
    // Alice's sign-in in another browser (no cookie for this flow): refused too.
    const flow3 = await confirm(await linkOf(alice));
    expect((await signIn(flow3.authorize, 'alice-2', '')).status).toBe(403);
    await alice.close();
  });

  it('config: browserLogin is for jwt or introspection, and its redirectUri defaults to /oauth/login/callback at auth.resource', () => {
    const base = {
      listen: { host: '127.0.0.1', port: 0 },
      upstreams: [{ name: 'e', transport: 'stdio', command: 'node' }],
    };
    const browserLogin = {
      authorizationUrl: 'https://login.example/authorize',
      tokenUrl: 'https://login.example/token',
      clientId: 'c',
      clientSecret: 's',
    };
    const derived = resolveConfig({ ...base, auth: { ...issuer.authConfig, browserLogin } });
    expect(derived.auth.browserLogin?.redirectUri).toBe(
      new URL('/oauth/login/callback', issuer.authConfig.resource as string).href,
    );
    expect(() =>
      resolveConfig({
        ...base,
        auth: { mode: 'api-key', apiKeys: [{ name: 'a', sha256: 'a'.repeat(64) }], browserLogin },
      }),
    ).toThrow(/auth\.browserLogin: applies to auth\.mode jwt or introspection/);
  });
});
