/**
 * Grant authorization-code against a real OAuth server: panva's oidc-provider on loopback
 * (test/support/oidc-provider.ts: confidential client with client_secret_basic, PKCE required,
 * RFC 8707 resource indicators, opaque access tokens the upstream checks at RFC 7662
 * introspection, rotating refresh tokens, RFC 7009 revocation, login and consent auto-approved
 * for the user the test's browser names). Two gateway replicas on a throwaway redis-server, one
 * SDK v1 session per user whose requests alternate between them.
 *
 * A user's first call gets -32042 (UrlElicitationRequiredError); the browser follows the link
 * through the gateway's confirmation page, oidc-provider's /auth and interaction, back to the
 * gateway's /oauth/callback; the retried call reaches the upstream with that user's token (the
 * upstream's introspection names the user). Then: two users, two tokens; expiry → one
 * refresh_token grant at oidc-provider, rotated; revocation reaches its revocation endpoint and
 * the next call asks again; a tampered state and an access_denied answer are typed errors.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitationCompleteNotificationSchema, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { post, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { statelessMeta, statelessRequest } from '../support/stateless.js';
import { connectAsUser, confirm, startGatewayOn } from '../support/oauth-browser.js';
import {
  consentAtProvider,
  OIDC_CLIENT,
  signIn,
  startIntrospectingUpstream,
  startOidcProvider,
  type OidcProvider,
  type UpstreamCall,
} from '../support/oidc-provider.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let op: OidcProvider;
let issuer: JwtIssuer;
let redis: RedisServer;
let upstream: Server;
let resource: string;
const replicas: RunningGateway[] = [];
const calls: UpstreamCall[] = [];
const hits: number[] = [];

beforeAll(async () => {
  [issuer, redis] = await Promise.all([startJwtIssuer(), startRedis()]);
  const [upstreamPort, portA, portB] = [await freePort(), await freePort(), await freePort()];
  resource = `http://127.0.0.1:${upstreamPort}/mcp`;
  // The callback a load balancer would send browsers to: here replica B (links are made on either).
  const redirectUri = `http://127.0.0.1:${portB}/oauth/callback`;
  op = await startOidcProvider({ redirectUris: [redirectUri], resource });
  upstream = await startIntrospectingUpstream(upstreamPort, resource, (t) => op.introspect(t), calls);
  const config = resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: issuer.authConfig,
      sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: 'op:' },
      secrets: { keys: [{ id: 'k1', key: '${TOKEN_KEY}' }] },
      upstreams: [
        httpUpstream('crm', resource, {
          discovery: 'anonymous',
          // Only the issuer: the endpoints come from its OpenID Connect discovery document.
          oauth: {
            grant: 'authorization-code',
            issuer: op.issuer,
            tokenUrl: `${op.issuer}/token`,
            clientId: OIDC_CLIENT.id,
            clientSecret: '${CRM_SECRET}',
            scopes: ['crm:read'],
            resource,
            redirectUri,
          },
        }),
      ],
    },
    { TOKEN_KEY: randomBytes(32).toString('base64'), CRM_SECRET: OIDC_CLIENT.secret },
  );
  for (const port of [portA, portB]) replicas.push(await startGatewayOn(config, port));
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await Promise.all([op?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
  await redis?.stop();
});

const connect = (sub: string): Promise<Client> => connectAsUser(issuer, sub, { replicas, hits });

/** The call's URL elicitation, as the SDK client raises it (-32042). */
async function elicitation(client: Client): Promise<{ url: string; elicitationId: string }> {
  const err = await client.callTool({ name: 'crm__whoami', arguments: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UrlElicitationRequiredError);
  expect((err as UrlElicitationRequiredError).code).toBe(-32042);
  const [e] = (err as UrlElicitationRequiredError).elicitations;
  expect(e).toMatchObject({ mode: 'url', url: expect.stringContaining(`${replicas[1]!.url.host}/oauth/start?state=`) });
  return e as { url: string; elicitationId: string };
}

const whoami = async (c: Client) => toolText(await c.callTool({ name: 'crm__whoami', arguments: {} }));
const codeGrant = (user: string) =>
  op.grants.filter((g) => g.grantType === 'authorization_code' && g.sub === user).at(-1)!;
const refreshGrants = (user: string) =>
  op.grants.filter((g) => g.grantType === 'refresh_token' && g.ok && g.sub === user);
const tokensSeen = (user: string) => new Set(calls.filter((c) => c.sub === user).map((c) => c.token));

describe('authorization code grant against oidc-provider', () => {
  it("the first call gets -32042; the browser goes through the confirmation, oidc-provider's sign-in and the callback; the retried call reaches the upstream as that user", async () => {
    const alice = await connect('alice');
    const completed: string[] = [];
    alice.setNotificationHandler(
      ElicitationCompleteNotificationSchema,
      (n) => void completed.push(n.params.elicitationId),
    );
    const asked = await elicitation(alice);
    const done = await consentAtProvider(asked.url, 'alice');
    expect(done.status).toBe(200);
    expect(done.page).toContain('Authorized');
    // To the authorization_endpoint of oidc-provider's discovery document, with PKCE S256, the scope and the resource.
    expect(done.authorize.origin + done.authorize.pathname).toBe(`${op.issuer}/auth`);
    expect(Object.fromEntries(done.authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: OIDC_CLIENT.id,
      code_challenge_method: 'S256',
      scope: 'crm:read',
      resource,
      redirect_uri: `${replicas[1]!.base}/oauth/callback`,
    });
    // oidc-provider names itself in the response (RFC 9207).
    expect(done.callback.searchParams.get('iss')).toBe(op.issuer);
    await until('the elicitation completes on the session', () => completed.length > 0);
    expect(completed).toEqual([asked.elicitationId]);

    for (let i = 0; i < 4; i++) expect(await whoami(alice)).toBe('you are alice');
    expect(op.logins.get('alice')).toBe(1);
    const granted = codeGrant('alice');
    expect(granted).toMatchObject({ ok: true, resource, scope: 'crm:read', refreshToken: expect.any(String) });
    // The upstream saw exactly the token oidc-provider issued for alice, and its introspection names her.
    expect(tokensSeen('alice')).toEqual(new Set([granted.accessToken]));
    expect(await op.introspect(granted.accessToken!)).toMatchObject({
      active: true,
      sub: 'alice',
      client_id: OIDC_CLIENT.id,
      aud: resource,
      scope: 'crm:read',
    });
    // Both replicas served calls; Redis holds the token sealed.
    expect(hits.every((n) => n >= 2)).toBe(true);
    const raw = new Redis(redis.url);
    try {
      const keys = (await raw.keys('op:tokens:*')).filter((k) => !k.startsWith('op:tokens:p:'));
      expect(keys).toHaveLength(1);
      const sealed = (await raw.get(keys[0]!))!;
      expect(sealed).toMatch(/^v1\.k1\./);
      for (const plain of ['alice', granted.accessToken!, granted.refreshToken!]) expect(sealed).not.toContain(plain);
    } finally {
      raw.disconnect();
    }
    // No token, code or state on the page.
    for (const secret of [
      granted.accessToken!,
      granted.refreshToken!,
      done.callback.searchParams.get('code')!,
      done.callback.searchParams.get('state')!,
    ])
      expect(done.page).not.toContain(secret);
    await alice.close();
  });

  it('two users get two tokens, each used only for its own user; a new session of the same user on either replica uses the stored one', async () => {
    const [bob, alice] = await Promise.all([connect('bob'), connect('alice')]);
    expect(await whoami(alice)).toBe('you are alice');
    expect((await consentAtProvider((await elicitation(bob)).url, 'bob')).status).toBe(200);
    expect(await whoami(bob)).toBe('you are bob');
    expect(await whoami(alice)).toBe('you are alice');
    expect(await whoami(bob)).toBe('you are bob');
    expect(tokensSeen('bob')).toEqual(new Set([codeGrant('bob').accessToken]));
    expect(tokensSeen('alice')).toEqual(new Set([codeGrant('alice').accessToken]));
    expect(codeGrant('bob').accessToken).not.toBe(codeGrant('alice').accessToken);
    expect(op.logins.get('alice')).toBe(1);
    await Promise.all([bob.close(), alice.close()]);
  });

  it('an expired access token is refreshed by a refresh_token grant at oidc-provider, the refresh token rotates, and the call succeeds', async () => {
    op.accessTokenTTL = 1;
    const carol = await connect('carol');
    expect((await consentAtProvider((await elicitation(carol)).url, 'carol')).status).toBe(200);
    op.accessTokenTTL = 3600;
    const first = codeGrant('carol');
    expect(first.expiresIn).toBe(1);
    // Expired for both: oidc-provider (introspection) and the gateway (its clock from the answer).
    await until(
      "carol's first access token expires",
      async () => Date.now() > first.at + 1100 && !(await op.introspect(first.accessToken!)).active,
    );
    expect(await whoami(carol)).toBe('you are carol');
    expect(await whoami(carol)).toBe('you are carol');
    const refreshed = refreshGrants('carol');
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]).toMatchObject({
      refreshTokenIn: first.refreshToken,
      resource,
      refreshToken: expect.any(String),
    });
    expect(refreshed[0]!.refreshToken).not.toBe(first.refreshToken);
    // Rotation: the used refresh token is dead at oidc-provider, the new one live.
    expect((await op.introspect(first.refreshToken!)).active).toBe(false);
    expect((await op.introspect(refreshed[0]!.refreshToken!)).active).toBe(true);
    expect([...tokensSeen('carol')]).toEqual([refreshed[0]!.accessToken]);
    await carol.close();
  });

  it("DELETE /oauth/tokens/crm reaches oidc-provider's revocation endpoint; the token is dead there; the next call asks again; others go on", async () => {
    const { authorization } = await issuer.bearer('alice');
    const [alice, bob] = await Promise.all([connect('alice'), connect('bob')]);
    expect(await whoami(alice)).toBe('you are alice');
    const held = codeGrant('alice');
    const res = await fetch(`${replicas[0]!.base}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } });
    expect(await res.json()).toEqual({ upstream: 'crm', revoked: true, revokedAtServer: true });
    // The refresh token first (oidc-provider then revokes the whole grant), then the access token.
    expect(op.revocations).toEqual([
      { token: held.refreshToken, hint: 'refresh_token' },
      { token: held.accessToken, hint: 'access_token' },
    ]);
    expect((await op.introspect(held.accessToken!)).active).toBe(false);
    expect((await op.introspect(held.refreshToken!)).active).toBe(false);
    // Asked again on both replicas.
    await elicitation(alice);
    await elicitation(alice);
    expect(await whoami(bob)).toBe('you are bob');
    await Promise.all([alice.close(), bob.close()]);
  });
});

describe('a 2026-07-28 client with oidc-provider', () => {
  it('gets the link as an input_required URL elicitation on one replica, consents at oidc-provider, and its retry on the other succeeds as its user', async () => {
    const { authorization } = await issuer.bearer('gina');
    const meta = statelessMeta({ elicitation: { url: {} } });
    const ask = statelessRequest(1, 'tools/call', { name: 'crm__whoami', arguments: {}, _meta: meta });
    const asked = await post(replicas[0]!.url, ask.body, { ...ask.headers, authorization });
    expect(asked.json.result.resultType).toBe('input_required');
    const [[key, request]] = Object.entries(asked.json.result.inputRequests) as [
      [string, { method: string; params: { mode: string; url: string } }],
    ];
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: expect.stringContaining('/oauth/start?state=') },
    });
    expect((await consentAtProvider(request.params.url, 'gina')).status).toBe(200);
    const retry = statelessRequest(2, 'tools/call', {
      name: 'crm__whoami',
      arguments: {},
      inputResponses: { [key]: { action: 'accept' } },
      _meta: meta,
    });
    const res = await post(replicas[1]!.url, retry.body, { ...retry.headers, authorization });
    expect(toolText(res.json.result)).toBe('you are gina');
    expect(tokensSeen('gina')).toEqual(new Set([codeGrant('gina').accessToken]));
  });
});

describe('bad inputs with oidc-provider', () => {
  const page = async (url: URL | string, cookie: string) => {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie } });
    return { status: res.status, text: await res.text() };
  };

  it('a tampered state at the callback: OAUTH_STATE_INVALID, nothing stored, and the genuine callback still completes', async () => {
    const dave = await connect('dave');
    const { authorize, cookie } = await confirm((await elicitation(dave)).url);
    const callback = await signIn(authorize, 'dave');
    const tampered = new URL(callback);
    const state = callback.searchParams.get('state')!;
    tampered.searchParams.set('state', (state[0] === 'A' ? 'B' : 'A') + state.slice(1));
    const refused = await page(tampered, cookie);
    expect(refused).toMatchObject({ status: 400, text: expect.stringContaining('OAUTH_STATE_INVALID') });
    expect(refused.text).not.toContain(callback.searchParams.get('code')!);
    expect(op.grants.filter((g) => g.grantType === 'authorization_code' && g.sub === 'dave')).toHaveLength(0);
    await elicitation(dave);
    expect(await page(callback, cookie)).toMatchObject({ status: 200 });
    expect(await whoami(dave)).toBe('you are dave');
    await dave.close();
  });

  it("RFC 9207: a callback whose iss names another server, or has none (oidc-provider's metadata promises one), is refused before the code is used; the state is spent", async () => {
    const frank = await connect('frank');
    const flow = async () => {
      const { authorize, cookie } = await confirm((await elicitation(frank)).url);
      return { callback: await signIn(authorize, 'frank'), cookie };
    };
    const mixedUp = await flow();
    expect(mixedUp.callback.searchParams.get('iss')).toBe(op.issuer);
    const otherIss = new URL(mixedUp.callback);
    otherIss.searchParams.set('iss', 'http://127.0.0.1:9/');
    expect(await page(otherIss, mixedUp.cookie)).toMatchObject({
      status: 400,
      text: expect.stringContaining('OAUTH_REQUEST_INVALID'),
    });
    expect(await page(mixedUp.callback, mixedUp.cookie)).toMatchObject({
      status: 400,
      text: expect.stringContaining('OAUTH_STATE_INVALID'),
    });

    const noIss = await flow();
    const stripped = new URL(noIss.callback);
    stripped.searchParams.delete('iss');
    expect(await page(stripped, noIss.cookie)).toMatchObject({
      status: 400,
      text: expect.stringContaining('RFC 9207'),
    });
    // Neither code was redeemed at oidc-provider.
    expect(op.grants.filter((g) => g.grantType === 'authorization_code' && g.sub === 'frank')).toHaveLength(0);

    const good = await flow();
    expect(await page(good.callback, good.cookie)).toMatchObject({ status: 200 });
    expect(await whoami(frank)).toBe('you are frank');
    await frank.close();
  });

  it('oidc-provider answering error=access_denied: UPSTREAM_IDENTITY_REFUSED naming the upstream, its description not echoed, the user asked again, another user unaffected', async () => {
    const [erin, bob] = await Promise.all([connect('erin'), connect('bob')]);
    op.deny.add('erin');
    const denied = await consentAtProvider((await elicitation(erin)).url, 'erin');
    op.deny.delete('erin');
    expect(denied.callback.searchParams.get('error')).toBe('access_denied');
    expect(denied.status).toBe(403);
    expect(denied.page).toContain('UPSTREAM_IDENTITY_REFUSED');
    expect(denied.page).toContain('crm');
    expect(denied.page).toContain('access_denied');
    expect(denied.page).not.toContain('<b>');
    expect(op.grants.filter((g) => g.sub === 'erin')).toHaveLength(0);
    await elicitation(erin);
    expect(await whoami(bob)).toBe('you are bob');
    await Promise.all([erin.close(), bob.close()]);
  });
});
