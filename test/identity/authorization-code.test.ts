/**
 * Per-user OAuth (issue 19, grant authorization-code), end to end with the SDK v1 client and a
 * real authorization server on loopback (test/support/authorization-server.ts: PKCE S256,
 * rotating refresh tokens, RFC 7009, RFC 8414 metadata, consent auto-approved for the user the
 * test's "browser" names). A user's first call is answered with a URL elicitation (-32042 for a
 * 2025-11-25 session, input_required for a 2026-07-28 request); following the link stores their
 * token; the retried call reaches the upstream with it. Then: two users, two tokens; refresh with
 * rotation; the upstream's 401 brings one refresh; revocation; every bad input to the callback.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { resolveConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { post, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { TEST_CLIENT, type AuthorizationServer } from '../support/authorization-server.js';
import type { JwtIssuer } from '../support/jwt-issuer.js';
import { statelessMeta, statelessRequest } from '../support/stateless.js';
import {
  authCodeOAuth,
  confirm,
  connectAsUser,
  consent,
  type LinkRig,
  type Seen,
  startGatewayOn,
  startLinkRig,
  upstreamUrl,
} from '../support/oauth-browser.js';
import { freePort } from '../support/redis.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let upstream: Server;
let gw: RunningGateway;
let port: number;
let rig: LinkRig;
const seen: Seen[] = [];

function gatewayConfig(crm: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: issuer.authConfig,
      upstreams: [
        httpUpstream('crm', upstreamUrl(upstream), {
          discovery: 'anonymous',
          // No authorizationUrl: it comes from the server's RFC 8414 metadata at `issuer`.
          oauth: {
            grant: 'authorization-code',
            tokenUrl: as.tokenUrl,
            issuer: as.issuer,
            clientId: TEST_CLIENT.id,
            clientSecret: '${CRM_SECRET}',
            scopes: ['crm:read'],
            redirectUri: `http://127.0.0.1:${port}/oauth/callback`,
          },
          ...crm,
        }),
      ],
      ...extra,
    },
    { CRM_SECRET: TEST_CLIENT.secret },
  );
}

const connect = (sub: string): Promise<Client> => connectAsUser(issuer, sub, gw);

/** The call's URL elicitation, as the SDK client raises it. */
async function elicitation(client: Client): Promise<{ url: string; elicitationId: string; message: string }> {
  try {
    await client.callTool({ name: 'crm__whoami', arguments: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(UrlElicitationRequiredError);
    expect((err as UrlElicitationRequiredError).code).toBe(-32042);
    const [e] = (err as UrlElicitationRequiredError).elicitations;
    expect(e).toMatchObject({
      mode: 'url',
      url: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${port}/oauth/start\\?state=`)),
      elicitationId: expect.any(String),
    });
    return e as { url: string; elicitationId: string; message: string };
  }
  throw new Error('the call did not ask for an authorization');
}

async function whoami(client: Client): Promise<string> {
  return toolText(await client.callTool({ name: 'crm__whoami', arguments: {} }));
}

const callTokens = (user: string) =>
  seen
    .filter((s) => s.method === 'tools/call' && as.live.get(String(s.headers.authorization).slice(7)) === user)
    .map((s) => s.headers.authorization);

beforeAll(async () => {
  rig = await startLinkRig(seen);
  ({ as, issuer, port, upstream } = rig);
  gw = await startGatewayOn(gatewayConfig(), port);
});
afterAll(async () => {
  await gw?.stop();
  await rig?.close();
});

describe('authorization code grant', () => {
  it("a user's first call gets a URL elicitation; the browser consents; the retried call reaches the upstream with the user's own token", async () => {
    const alice = await connect('alice');
    const completed: string[] = [];
    alice.setNotificationHandler(
      ElicitationCompleteNotificationSchema,
      (n) => void completed.push(n.params.elicitationId),
    );
    const asked = await elicitation(alice);
    expect(asked.message).toContain('crm');
    const done = await consent(asked.url, 'alice');
    // 2025-11-25: the session that was asked hears that its elicitation completed (on its GET stream).
    for (let i = 0; i < 50 && completed.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(completed).toEqual([asked.elicitationId]);
    expect(done.status).toBe(200);
    expect(done.headers.get('content-type')).toMatch(/^text\/html/);
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(done.page).toContain('Authorized');
    // PKCE S256 and the configured client, scope and redirect_uri, to the endpoint the metadata named.
    expect(done.authorize.origin + done.authorize.pathname).toBe(`${as.issuer}/authorize`);
    expect(Object.fromEntries(done.authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: TEST_CLIENT.id,
      code_challenge_method: 'S256',
      scope: 'crm:read',
      redirect_uri: `http://127.0.0.1:${port}/oauth/callback`,
    });
    const redeemed = as.forms.find((f) => f.get('grant_type') === 'authorization_code')!;
    expect(redeemed.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(done.authorize.searchParams.get('code_challenge')).not.toBe(redeemed.get('code_verifier'));

    expect(await whoami(alice)).toBe('you are alice');
    expect(await whoami(alice)).toBe('you are alice');
    expect(as.codes.get('alice')).toBe(1);
    expect(new Set(callTokens('alice'))).toEqual(new Set([expect.stringMatching(/^Bearer uc-alice-\d+$/)]));
    // No token, code or state on the page.
    for (const secret of [
      ...as.live.keys(),
      ...as.refreshTokens.keys(),
      done.callback.searchParams.get('code')!,
      done.callback.searchParams.get('state')!,
    ])
      expect(done.page).not.toContain(secret);
    await alice.close();
  });

  it("two users get two tokens; another principal never gets a user's token (it is asked for its own)", async () => {
    const [bob, alice] = await Promise.all([connect('bob'), connect('alice')]);
    // alice authorized above (another session, same principal): her token is there for her.
    expect(await whoami(alice)).toBe('you are alice');
    const asked = await elicitation(bob);
    expect((await consent(asked.url, 'bob')).status).toBe(200);
    expect(await whoami(bob)).toBe('you are bob');
    expect(await whoami(alice)).toBe('you are alice');
    const [a] = new Set(callTokens('alice'));
    const [b] = new Set(callTokens('bob'));
    expect(a).not.toBe(b);
    await Promise.all([bob.close(), alice.close()]);
  });

  it('an expired access token is refreshed once (concurrent calls share it) and the refresh token rotates', async () => {
    as.expiresIn = 1;
    const dave = await connect('dave');
    expect((await consent((await elicitation(dave)).url, 'dave')).status).toBe(200);
    as.expiresIn = 3600;
    expect(await whoami(dave)).toBe('you are dave');
    const firstRefresh = [...as.refreshTokens.entries()].find(([, u]) => u === 'dave')![0];
    await new Promise((r) => setTimeout(r, 1100));
    const answers = await Promise.all([whoami(dave), whoami(dave), whoami(dave)]);
    expect(answers).toEqual(Array(3).fill('you are dave'));
    expect(as.refreshes.get('dave')).toBe(1);
    expect(as.forms.find((f) => f.get('grant_type') === 'refresh_token')!.get('refresh_token')).toBe(firstRefresh);
    // The used refresh token is dead at the server; the new one is what the gateway holds now.
    expect(as.refreshTokens.has(firstRefresh)).toBe(false);
    expect([...as.refreshTokens.values()].filter((u) => u === 'dave')).toHaveLength(1);
    expect(new Set(callTokens('dave')).size).toBe(2);
    await dave.close();
  });

  it("the upstream's 401 (a token revoked at the server) brings one refresh, and the call succeeds; the circuit never counts users", async () => {
    const alice = await connect('alice');
    const [current] = callTokens('alice').slice(-1);
    as.revoke(String(current).slice(7));
    const before = as.refreshes.get('alice') ?? 0;
    expect(await whoami(alice)).toBe('you are alice');
    expect(as.refreshes.get('alice')).toBe(before + 1);
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as any;
    expect(ready.upstreams.crm).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
    await alice.close();
  });

  it("DELETE /oauth/tokens/crm revokes the caller's token at the server (RFC 7009) and forgets it; the next call asks again", async () => {
    const { authorization } = await issuer.bearer('bob');
    const bob = await connect('bob');
    expect(await whoami(bob)).toBe('you are bob');
    const held = [...as.refreshTokens.entries()].find(([, u]) => u === 'bob')![0];
    expect((await fetch(`${gw.base}/oauth/tokens/crm`, { method: 'DELETE' })).status).toBe(401);
    const unknown = await fetch(`${gw.base}/oauth/tokens/nope`, { method: 'DELETE', headers: { authorization } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error.data.type).toBe('OAUTH_UPSTREAM_UNKNOWN');
    const res = await fetch(`${gw.base}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ upstream: 'crm', revoked: true, revokedAtServer: true });
    expect(as.revoked).toContain(held);
    expect(as.refreshTokens.has(held)).toBe(false);
    await elicitation(bob);
    // alice's token is untouched by bob's revocation.
    expect(await whoami(await connect('alice'))).toBe('you are alice');
    const again = await fetch(`${gw.base}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } });
    expect(await again.json()).toMatchObject({ revoked: false });
    await bob.close();
  });
});

describe('bad inputs to /oauth/start and /oauth/callback', () => {
  const page = async (url: string, cookie?: string) => {
    const res = await fetch(url, { redirect: 'manual', ...(cookie ? { headers: { cookie } } : {}) });
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  };

  it('unknown, replayed or missing state; missing code; the server refusing consent: typed errors, plain HTML, no token stored', async () => {
    expect(await page(`${gw.base}/oauth/start?state=not-ours`)).toMatchObject({
      status: 400,
      text: expect.stringContaining('OAUTH_STATE_INVALID'),
    });
    expect(await page(`${gw.base}/oauth/start`)).toMatchObject({ status: 400 });
    expect(await page(`${gw.base}/oauth/callback?state=not-ours&code=x`)).toMatchObject({
      status: 400,
      text: expect.stringContaining('OAUTH_STATE_INVALID'),
    });

    const carol = await connect('carol');
    // A callback replayed (the code and state of a flow that completed): the state works once.
    const done = await consent((await elicitation(carol)).url, 'carol');
    expect(done.status).toBe(200);
    expect(await page(done.callback.href)).toMatchObject({
      status: 400,
      text: expect.stringContaining('OAUTH_STATE_INVALID'),
    });

    // No code (nor error): 400, and that state is spent.
    await fetch(`${gw.base}/oauth/tokens/crm`, { method: 'DELETE', headers: await issuer.bearer('carol') });
    const confirmed = await confirm((await elicitation(carol)).url);
    const state = confirmed.authorize.searchParams.get('state')!;
    const noCode = await page(`${gw.base}/oauth/callback?state=${state}`, confirmed.cookie);
    expect(noCode).toMatchObject({
      status: 400,
      type: expect.stringMatching(/^text\/html/),
      text: expect.stringContaining('OAUTH_REQUEST_INVALID'),
    });
    expect(await page(`${gw.base}/oauth/callback?state=${state}&code=late`)).toMatchObject({ status: 400 });

    // The server says access_denied (its description holds markup: never echoed).
    as.deny.add('carol');
    const denied = await consent((await elicitation(carol)).url, 'carol');
    expect(denied.status).toBe(403);
    expect(denied.page).toContain('UPSTREAM_IDENTITY_REFUSED');
    expect(denied.page).toContain('access_denied');
    expect(denied.page).not.toContain('<b>');
    as.deny.delete('carol');

    // A forged code for a real state: the server refuses it (invalid_grant), 403.
    const forgedFlow = await confirm((await elicitation(carol)).url);
    const forged = forgedFlow.authorize.searchParams.get('state')!;
    expect(await page(`${gw.base}/oauth/callback?state=${forged}&code=forged`, forgedFlow.cookie)).toMatchObject({
      status: 403,
      text: expect.stringContaining('invalid_grant'),
    });
    await elicitation(carol);
    await carol.close();
  });
});

describe('2026-07-28 clients', () => {
  it('get the link as an input_required URL elicitation, or MISSING_CLIENT_CAPABILITY without elicitation.url; the retry after consent succeeds', async () => {
    const { authorization } = await issuer.bearer('erin');
    const plain = statelessRequest(1, 'tools/call', { name: 'crm__whoami', arguments: {} });
    const refused = await post(gw.url, plain.body, { ...plain.headers, authorization });
    expect(refused.json.error).toMatchObject({
      code: -32021,
      data: { type: 'MISSING_CLIENT_CAPABILITY', requiredCapabilities: { elicitation: { url: {} } } },
    });

    const capable = statelessRequest(2, 'tools/call', {
      name: 'crm__whoami',
      arguments: {},
      _meta: statelessMeta({ elicitation: { url: {} } }),
    });
    const asked = await post(gw.url, capable.body, { ...capable.headers, authorization });
    expect(asked.status).toBe(200);
    expect(asked.json.result.resultType).toBe('input_required');
    const [[key, request]] = Object.entries(asked.json.result.inputRequests) as [[string, any]];
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: expect.stringContaining('/oauth/start?state='), message: expect.any(String) },
    });
    expect((await consent(request.params.url, 'erin')).status).toBe(200);

    const retry = statelessRequest(3, 'tools/call', {
      name: 'crm__whoami',
      arguments: {},
      inputResponses: { [key]: { action: 'accept' } },
      _meta: statelessMeta({ elicitation: { url: {} } }),
    });
    const res = await post(gw.url, retry.body, { ...retry.headers, authorization });
    expect(toolText(res.json.result)).toBe('you are erin');
  });
});

describe('logs', () => {
  it('no token, refresh token, code, state or verifier is ever logged, at debug level, through a grant, a refresh, a refusal and a revocation', async () => {
    const lines: string[] = [];
    const logPort = await freePort();
    const config = gatewayConfig({ oauth: authCodeOAuth(as, logPort) }, { logLevel: 'debug' });
    const gateway = await buildApp(config, {
      logger: createLogger('debug', { write: (line: string) => void lines.push(line) }),
      defaultMetrics: false,
    });
    const address = await gateway.app.listen({ host: '127.0.0.1', port: logPort });
    const secrets: string[] = [];
    try {
      const { authorization } = await issuer.bearer('lena');
      secrets.push(authorization.slice(7));
      const client = new Client({ name: 'lena', version: '1' }, { capabilities: { elicitation: { url: {} } } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', address), { requestInit: { headers: { authorization } } }),
      );
      const link = await client.callTool({ name: 'crm__whoami', arguments: {} }).then(
        () => '',
        (err: UrlElicitationRequiredError) => err.elicitations[0]!.url,
      );
      as.expiresIn = 1;
      const done = await consent(link, 'lena');
      as.expiresIn = 3600;
      secrets.push(
        done.callback.searchParams.get('code')!,
        done.callback.searchParams.get('state')!,
        new URL(link).searchParams.get('state')!,
        done.cookie.split('=')[1]!,
      );
      await new Promise((r) => setTimeout(r, 1100));
      expect(toolText(await client.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are lena');
      await fetch(
        `${address}/oauth/callback?state=${done.callback.searchParams.get('state')}&code=${done.callback.searchParams.get('code')}`,
      );
      await fetch(`${address}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } });
      await client.close();
      const verifier = as.forms
        .filter((f) => f.get('grant_type') === 'authorization_code')
        .at(-1)!
        .get('code_verifier')!;
      secrets.push(
        verifier,
        ...[...as.live.keys()].filter((t) => t.includes('lena')),
        ...as.revoked.filter((t) => t.includes('lena')),
      );
      expect(lines.length).toBeGreaterThan(5);
      const log = lines.join('');
      for (const secret of secrets) expect(log).not.toContain(secret);
    } finally {
      await gateway.close();
    }
  });
});

describe('config', () => {
  it('grant authorization-code needs auth on and a redirectUri (or auth.resource); audience is for token-exchange', () => {
    expect(() => gatewayConfig({}, { auth: { mode: 'none' } })).toThrow(
      /upstreams\[0\]\.oauth\.grant authorization-code: needs auth\.mode/,
    );
    expect(() =>
      gatewayConfig({
        oauth: { grant: 'authorization-code', tokenUrl: as.tokenUrl, clientId: 'x', clientSecret: 'y', audience: 'z' },
      }),
    ).toThrow(/audience and actorToken apply to grant token-exchange only/);
    // Without redirectUri: the callback at auth.resource's origin.
    const derived = gatewayConfig({
      oauth: { grant: 'authorization-code', tokenUrl: as.tokenUrl, clientId: 'x', clientSecret: 'y' },
    });
    expect((derived.upstreams[0] as any).oauth.redirectUri).toBe('http://127.0.0.1/oauth/callback');
  });
});
