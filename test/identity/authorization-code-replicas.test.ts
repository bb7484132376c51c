/**
 * Per-user OAuth across replicas: two gateways on one real redis-server, one SDK v1 session
 * whose requests alternate between them (no affinity). The link a call gets is finished on the
 * other replica (its redirectUri names that one), the token it stores is the session's on both,
 * an expiry is refreshed once whichever replica sees it (a race of two refreshes ends with one
 * live refresh token), and Redis holds tokens and pending authorizations only sealed.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitationCompleteNotificationSchema, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startAuthorizationServer, TEST_CLIENT, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import {
  connectAsUser,
  consent,
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
let replicas: RunningGateway[] = [];
const seen: Seen[] = [];
const hits: number[] = [];

beforeAll(async () => {
  [as, issuer, redis] = await Promise.all([startAuthorizationServer(), startJwtIssuer(), startRedis()]);
  upstream = await startUserUpstream(as, seen);
  const ports = [await freePort(), await freePort()];
  const config = resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: issuer.authConfig,
      sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: 'ac:' },
      secrets: { keys: [{ id: 'k1', key: '${TOKEN_KEY}' }] },
      upstreams: [
        httpUpstream('crm', upstreamUrl(upstream), {
          discovery: 'anonymous',
          oauth: {
            grant: 'authorization-code',
            tokenUrl: as.tokenUrl,
            authorizationUrl: `${as.issuer}/authorize`,
            revocationUrl: `${as.issuer}/revoke`,
            clientId: TEST_CLIENT.id,
            clientSecret: TEST_CLIENT.secret,
            redirectUri: `http://127.0.0.1:${ports[1]}/oauth/callback`,
          },
        }),
      ],
    },
    { TOKEN_KEY: randomBytes(32).toString('base64') },
  );
  for (const port of ports) replicas.push(await startGatewayOn(config, port));
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await Promise.all([as?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
  await redis?.stop();
});

const connect = (sub: string): Promise<Client> => connectAsUser(issuer, sub, { replicas, hits });

const whoami = async (c: Client) => toolText(await c.callTool({ name: 'crm__whoami', arguments: {} }));

describe('authorization code across replicas', () => {
  it('a link given by one replica is finished on the other; the session then calls as its user on both; Redis holds only ciphertext', async () => {
    const alice = await connect('alice');
    const completed: string[] = [];
    alice.setNotificationHandler(
      ElicitationCompleteNotificationSchema,
      (n) => void completed.push(n.params.elicitationId),
    );
    let link = '';
    let elicitationId = '';
    try {
      await alice.callTool({ name: 'crm__whoami', arguments: {} });
    } catch (err) {
      expect(err).toBeInstanceOf(UrlElicitationRequiredError);
      ({ url: link, elicitationId } = (err as UrlElicitationRequiredError).elicitations[0]!);
    }
    expect(link).toContain(`${replicas[1]!.url.host}/oauth/start`);

    // Pending: sealed in Redis, the verifier nowhere in sight.
    const raw = new Redis(redis.url);
    try {
      const pendingKeys = await raw.keys('ac:tokens:p:*');
      expect(pendingKeys).toHaveLength(1);
      const sealedPending = (await raw.get(pendingKeys[0]!))!;
      expect(sealedPending).toMatch(/^v1\.k1\./);
      expect(sealedPending).not.toContain('alice');

      expect((await consent(link, 'alice')).status).toBe(200);
      // The completion reaches the session's GET stream, whichever replica holds it.
      for (let i = 0; i < 100 && completed.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(completed).toEqual([elicitationId]);
      const before = hits.slice();
      for (let i = 0; i < 4; i++) expect(await whoami(alice)).toBe('you are alice');
      // Both replicas served those calls.
      expect(hits.map((h, i) => h - (before[i] ?? 0)).every((n) => n >= 2)).toBe(true);
      expect(as.codes.get('alice')).toBe(1);

      const tokenKeys = (await raw.keys('ac:tokens:*')).filter((k) => !k.startsWith('ac:tokens:p:'));
      expect(tokenKeys).toHaveLength(1);
      const sealed = (await raw.get(tokenKeys[0]!))!;
      expect(sealed).toMatch(/^v1\.k1\./);
      for (const plain of ['alice', ...as.live.keys(), ...as.refreshTokens.keys()]) expect(sealed).not.toContain(plain);
      // The pending authorization was taken.
      expect(await raw.keys('ac:tokens:p:*')).toHaveLength(0);
    } finally {
      raw.disconnect();
    }
    await alice.close();
  });

  it('an expired token is refreshed once whichever replica calls; two replicas racing to refresh both succeed, and one refresh token stays live', async () => {
    as.expiresIn = 1;
    const bob = await connect('bob');
    await bob
      .callTool({ name: 'crm__whoami', arguments: {} })
      .catch((err: UrlElicitationRequiredError) => consent(err.elicitations[0]!.url, 'bob'));
    expect(await whoami(bob)).toBe('you are bob');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await whoami(bob)).toBe('you are bob');
    expect(await whoami(bob)).toBe('you are bob');
    expect(as.refreshes.get('bob')).toBe(1);

    await new Promise((r) => setTimeout(r, 1100));
    // Two calls at once, one on each replica (round robin), both refreshing with the same refresh
    // token while the server holds its answers: one wins the rotation, the other is refused and
    // takes the winner's token from the store.
    as.refreshDelayMs = 150;
    expect(await Promise.all([whoami(bob), whoami(bob)])).toEqual(['you are bob', 'you are bob']);
    expect(as.refreshes.get('bob')).toBe(2);
    expect(as.refusedRefreshes).toBe(1);
    expect([...as.refreshTokens.values()].filter((u) => u === 'bob')).toHaveLength(1);
    as.refreshDelayMs = 0;
    as.expiresIn = 3600;
    await bob.close();
  });

  it('a revocation on one replica holds on the other at once', async () => {
    const { authorization } = await issuer.bearer('alice');
    const alice = await connect('alice');
    expect(await whoami(alice)).toBe('you are alice');
    const res = await fetch(`${replicas[0]!.base}/oauth/tokens/crm`, { method: 'DELETE', headers: { authorization } });
    expect(await res.json()).toMatchObject({ revoked: true, revokedAtServer: true });
    for (let i = 0; i < 2; i++)
      await expect(alice.callTool({ name: 'crm__whoami', arguments: {} })).rejects.toBeInstanceOf(
        UrlElicitationRequiredError,
      );
    await alice.close();
  });
});
