/**
 * auth.browserLogin across replicas: two gateways on one real redis-server. The link's page is
 * opened and confirmed on replica A (a load balancer may send the browser anywhere), the sign-in
 * at the gateway's own authorization server comes back to replica B (browserLogin.redirectUri),
 * and so does the upstream's callback; the pending authorization, with its sign-in verifier,
 * travels between them only sealed in Redis. The SDK session, alternating between replicas,
 * then calls as its user on both. Someone else's sign-in is refused on B for a flow begun on A,
 * and its state is spent on both.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { startLoginServer } from '../support/login-server.js';
import {
  authCodeOAuth,
  connectAsUser,
  confirm,
  startGatewayOn,
  startUserUpstream,
  upstreamUrl,
  type Seen,
} from '../support/oauth-browser.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let redis: RedisServer;
let upstream: Server;
let loginServer: Server;
const replicas: RunningGateway[] = [];
const seen: Seen[] = [];
const hits: number[] = [];

beforeAll(async () => {
  [as, issuer, redis] = await Promise.all([startAuthorizationServer(), startJwtIssuer(), startRedis()]);
  [upstream, loginServer] = await Promise.all([startUserUpstream(as, seen), startLoginServer(issuer)]);
  const login = `http://127.0.0.1:${(loginServer.address() as AddressInfo).port}`;
  const [portA, portB] = [await freePort(), await freePort()];
  const config = resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: {
        ...issuer.authConfig,
        browserLogin: {
          authorizationUrl: `${login}/authorize`,
          tokenUrl: `${login}/token`,
          clientId: 'gw-browser',
          clientSecret: 's',
          redirectUri: `http://127.0.0.1:${portB}/oauth/login/callback`,
        },
      },
      sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: 'bl:' },
      secrets: { keys: [{ id: 'k1', key: '${TOKEN_KEY}' }] },
      upstreams: [
        httpUpstream('crm', upstreamUrl(upstream), {
          discovery: 'anonymous',
          oauth: authCodeOAuth(as, portB),
        }),
      ],
    },
    { TOKEN_KEY: randomBytes(32).toString('base64') },
  );
  for (const port of [portA, portB]) replicas.push(await startGatewayOn(config, port));
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await Promise.all([
    as?.close(),
    issuer?.close(),
    new Promise((r) => upstream?.close(r)),
    new Promise((r) => loginServer?.close(r)),
  ]);
  await redis?.stop();
});

const connect = (sub: string): Promise<Client> => connectAsUser(issuer, sub, { replicas, hits });

/** The link a call is answered with, as replica A serves it (the load balancer's choice). */
async function linkOnA(client: Client): Promise<string> {
  const err = await client.callTool({ name: 'crm__whoami', arguments: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UrlElicitationRequiredError);
  const link = new URL((err as UrlElicitationRequiredError).elicitations[0]!.url);
  expect(link.host).toBe(replicas[1]!.url.host);
  link.host = replicas[0]!.url.host;
  return link.href;
}

/** The browser at an authorization server's /authorize as `user`, and back where it is sent, with its cookie. */
async function signIn(authorize: URL, user: string, cookie: string): Promise<{ landed: URL; res: Response }> {
  const approved = await fetch(authorize, { redirect: 'manual', headers: { 'x-test-user': user } });
  expect(approved.status).toBe(302);
  const landed = new URL(approved.headers.get('location')!);
  return { landed, res: await fetch(landed, { redirect: 'manual', headers: { cookie } }) };
}

/** Pending authorizations in Redis: each sealed, none naming its principal. */
async function sealedPending(principal: string): Promise<number> {
  const raw = new Redis(redis.url);
  try {
    const keys = await raw.keys('bl:tokens:p:*');
    for (const key of keys) {
      const value = (await raw.get(key))!;
      expect(value).toMatch(/^v1\.k1\./);
      expect(value).not.toContain(principal);
    }
    return keys.length;
  } finally {
    raw.disconnect();
  }
}

const whoami = async (c: Client) => toolText(await c.callTool({ name: 'crm__whoami', arguments: {} }));

describe('auth.browserLogin across replicas', () => {
  it("the page confirmed on A, the sign-in landing on B, the upstream's callback on B: the session then calls as its user on both", async () => {
    const alice = await connect('alice');
    const flow = await confirm(await linkOnA(alice));
    expect(flow.authorize.origin).toBe(`http://127.0.0.1:${(loginServer.address() as AddressInfo).port}`);
    // Signing in: one pending (the confirmed one, with its sign-in verifier), sealed.
    expect(await sealedPending('alice')).toBe(1);
    const loggedIn = await signIn(flow.authorize, 'alice', flow.cookie);
    expect(loggedIn.landed.host).toBe(replicas[1]!.url.host);
    expect(loggedIn.landed.pathname).toBe('/oauth/login/callback');
    expect(loggedIn.res.status).toBe(303);
    const upstreamAuthorize = new URL(loggedIn.res.headers.get('location')!);
    expect(upstreamAuthorize.origin + upstreamAuthorize.pathname).toBe(`${as.issuer}/authorize`);
    const done = await signIn(upstreamAuthorize, 'alice', flow.cookie);
    expect(done.landed.host).toBe(replicas[1]!.url.host);
    expect(done.res.status).toBe(200);
    expect(await done.res.text()).toContain('Authorized');
    expect(await sealedPending('alice')).toBe(0);

    const before = hits.slice();
    for (let i = 0; i < 4; i++) expect(await whoami(alice)).toBe('you are alice');
    expect(hits.map((h, i) => h - (before[i] ?? 0)).every((n) => n >= 2)).toBe(true);
    expect(as.codes.get('alice')).toBe(1);
    await alice.close();
  });

  it('someone else signing in on B for a flow confirmed on A: 403, nothing linked, the state spent on both replicas', async () => {
    const carol = await connect('carol');
    const flow = await confirm(await linkOnA(carol));
    const asBob = await signIn(flow.authorize, 'bob', flow.cookie);
    expect(asBob.landed.host).toBe(replicas[1]!.url.host);
    expect(asBob.res.status).toBe(403);
    expect(await asBob.res.text()).toContain('OAUTH_CONSENT_INVALID');
    expect(asBob.res.headers.get('location')).toBeNull();
    expect(as.codes.get('bob')).toBeUndefined();
    expect(await sealedPending('carol')).toBe(0);
    // The same sign-in answer replayed on A (or B again): the state is gone from Redis.
    for (const replica of replicas) {
      const replay = new URL(asBob.landed);
      replay.host = replica.url.host;
      expect((await fetch(replay, { redirect: 'manual', headers: { cookie: flow.cookie } })).status).toBe(400);
    }
    await expect(carol.callTool({ name: 'crm__whoami', arguments: {} })).rejects.toBeInstanceOf(
      UrlElicitationRequiredError,
    );
    // Carol herself, in the browser that confirmed, on the next link: linked.
    const again = await confirm(await linkOnA(carol));
    const loggedIn = await signIn(again.authorize, 'carol', again.cookie);
    expect(loggedIn.res.status).toBe(303);
    expect((await signIn(new URL(loggedIn.res.headers.get('location')!), 'carol', again.cookie)).res.status).toBe(200);
    expect(await whoami(carol)).toBe('you are carol');
    await carol.close();
  });
});
