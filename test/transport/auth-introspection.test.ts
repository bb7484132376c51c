/**
 * Opaque bearer tokens checked with the authorization server (RFC 7662 token introspection): a
 * real introspection endpoint on loopback that wants the gateway's client credentials, answers
 * per token and counts its questions. What the gateway must show: good tokens work and are asked
 * about once per cache period, every kind of refused token is a 401 with its reason, a failing
 * authorization server is a retryable 503 that asks it again only after a pause, and none of it
 * disturbs a client whose token is already known.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import {
  ECHO_SERVER,
  exampleConfig,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';

const RESOURCE = 'http://127.0.0.1/mcp';
const ISSUER = 'http://127.0.0.1/issuer';
const CLIENT = { id: 'mcp-gateway', secret: 's3cret:with/odd chars' };

type Behaviour = 'answer' | 'fail' | 'hang' | 'garbage';
let behaviour: Behaviour = 'answer';
const asked = new Map<string, number>();
const hung: Array<() => void> = [];
let introspection: Server;
let introspectionUrl: string;
let gw: RunningGateway;

const now = () => Math.floor(Date.now() / 1000);

/** What the authorization server knows of each token. */
function answerFor(token: string): Record<string, unknown> {
  const good = { active: true, scope: 'mcp:tools', exp: now() + 300 };
  switch (token) {
    case 'alice':
      return { ...good, sub: 'alice', iss: ISSUER, aud: [RESOURCE, 'http://127.0.0.1/other'] };
    case 'bob': // iss and aud are optional in an introspection answer
      return { ...good, sub: 'bob' };
    case 'carol':
      return { ...good, sub: 'carol' };
    case 'frank':
      return { ...good, sub: 'frank' };
    case 'wrong-scope':
      return { ...good, sub: 'dave', scope: 'other' };
    case 'wrong-aud':
      return { ...good, sub: 'dave', aud: 'http://127.0.0.1/elsewhere' };
    case 'wrong-iss':
      return { ...good, sub: 'dave', iss: 'http://127.0.0.1/other-issuer' };
    case 'no-sub':
      return { active: true, scope: 'mcp:tools' };
    case 'expired':
      return { ...good, sub: 'eve', exp: now() - 5 };
    default:
      return { active: false };
  }
}

beforeAll(async () => {
  introspection = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const expected = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT.id)}:${encodeURIComponent(CLIENT.secret)}`).toString('base64')}`;
      if (
        req.headers.authorization !== expected ||
        req.headers['content-type'] !== 'application/x-www-form-urlencoded'
      ) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
        return;
      }
      const token = new URLSearchParams(body).get('token') ?? '';
      asked.set(token, (asked.get(token) ?? 0) + 1);
      if (behaviour === 'fail') return void res.writeHead(500).end('boom');
      if (behaviour === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
      if (behaviour === 'hang') return void hung.push(() => res.destroy());
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answerFor(token)));
    });
  });
  await new Promise<void>((r) => introspection.listen(0, '127.0.0.1', r));
  introspectionUrl = `http://127.0.0.1:${(introspection.address() as AddressInfo).port}/introspect`;
  // The secret comes from the environment, as it would in a deployment.
  const config = resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      upstreams: [stdioUpstream('echo', ECHO_SERVER)],
      auth: {
        mode: 'introspection',
        resource: RESOURCE,
        issuer: ISSUER,
        authorizationServers: [ISSUER],
        requiredScopes: ['mcp:tools'],
        introspection: {
          url: introspectionUrl,
          clientId: CLIENT.id,
          clientSecret: '${INTROSPECTION_SECRET}',
          cacheSeconds: 60,
          timeoutMs: 500,
        },
      },
    },
    { INTROSPECTION_SECRET: CLIENT.secret },
  );
  gw = await startGateway(config);
});

afterAll(async () => {
  await gw?.stop();
  for (const h of hung.splice(0)) h();
  await new Promise((r) => introspection?.close(r));
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });

function initialize(headers: Record<string, string>) {
  return post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'introspection-test', version: '1' },
      },
    },
    headers,
  );
}

async function echo(token: string, sid: string, text: string) {
  return post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text } } },
    { ...as(token), 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
  );
}

async function session(token: string): Promise<string> {
  const r = await initialize(as(token));
  expect(r.status, r.text).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

describe('token introspection', () => {
  it('a good token works, and is asked about once for many requests', async () => {
    behaviour = 'answer';
    asked.delete('alice');
    const sid = await session('alice');
    for (let i = 0; i < 5; i++)
      expect((await echo('alice', sid, `hi ${i}`)).json.result.content[0].text).toBe(`hi ${i}`);
    expect(asked.get('alice')).toBe(1);
  });

  it('concurrent first requests with one token cost one question', async () => {
    behaviour = 'answer';
    asked.delete('carol');
    const results = await Promise.all(Array.from({ length: 10 }, () => initialize(as('carol'))));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(asked.get('carol')).toBe(1);
  });

  it('an answer without iss and aud is accepted; the session belongs to that subject', async () => {
    behaviour = 'answer';
    const sid = await session('bob');
    expect((await echo('bob', sid, 'bob here')).json.result.content[0].text).toBe('bob here');
    // Another good token, another subject: not this session's owner.
    const r = await echo('alice', sid, 'not mine');
    expect(r.status).toBe(404);
  });

  it.each([
    ['an unknown token', 'nobody-knows-me', 401, -32012, /not active/],
    ['an expired token', 'expired', 401, -32012, /expired/],
    ['a token for another resource', 'wrong-aud', 401, -32012, /aud claim/],
    ['a token from another issuer', 'wrong-iss', 401, -32012, /iss claim/],
    ['a token without a subject', 'no-sub', 401, -32012, /subject/],
    ['a token without the required scope', 'wrong-scope', 403, -32013, /mcp:tools/],
  ])('%s: refused with its reason and the challenge', async (_what, token, status, code, why) => {
    behaviour = 'answer';
    const r = await initialize(as(token));
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(r.json.error.message).toMatch(why);
    expect(r.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
  });

  it('serves the protected resource metadata naming the authorization server', async () => {
    const res = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', gw.base));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      scopes_supported: ['mcp:tools'],
    });
  });

  it.each([
    ['answers 500', 'fail' as const],
    ['answers something that is not JSON', 'garbage' as const],
    ['does not answer within timeoutMs', 'hang' as const],
  ])(
    'an authorization server that %s: 503 -32014 (retryable), a known token still works, and it is asked again after a pause',
    async (_what, how) => {
      behaviour = 'answer';
      const sid = await session('alice'); // cached before the outage
      behaviour = how;
      const token = `new-${how}`;
      asked.delete(token);
      const t = Date.now();
      const r = await initialize(as(token));
      expect(Date.now() - t).toBeLessThan(3000);
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe(-32014);
      expect(r.json.error.data).toMatchObject({ retryable: true });
      // Within the pause, the server is not asked again.
      expect((await initialize(as(token))).status).toBe(503);
      expect(asked.get(token)).toBe(1);
      expect((await echo('alice', sid, 'still here')).json.result.content[0].text).toBe('still here');
      for (const h of hung.splice(0)) h();
      behaviour = 'answer';
      await new Promise((r) => setTimeout(r, 1100));
      // Once it answers again, so does the gateway; the token was never cached as bad.
      expect((await initialize(as(token))).status).toBe(401);
      expect(asked.get(token)).toBe(2);
    },
  );

  it('counts its questions by outcome in mcpgw_token_introspections_total (cached answers are not questions)', async () => {
    const count = async (outcome: string) => {
      const text = await (await fetch(new URL('/metrics', gw.base))).text();
      return Number(
        new RegExp(`^mcpgw_token_introspections_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0,
      );
    };
    behaviour = 'answer';
    const before = { active: await count('active'), inactive: await count('inactive') };
    await initialize(as('counted-unknown'));
    const sid = await session('frank');
    await echo('frank', sid, 'cached');
    await echo('frank', sid, 'cached again');
    expect(await count('inactive')).toBe(before.inactive + 1);
    expect(await count('active')).toBe(before.active + 1);
    expect(await count('failed')).toBeGreaterThan(0); // the outage cases above
  });

  it('wrong client credentials of the gateway itself: 503, not 401 (the token may be good)', async () => {
    const other = await startGateway(
      exampleConfig({
        upstreams: [stdioUpstream('echo', ECHO_SERVER)],
        auth: {
          mode: 'introspection',
          resource: RESOURCE,
          authorizationServers: [ISSUER],
          introspection: { url: introspectionUrl, clientId: CLIENT.id, clientSecret: 'wrong' },
        },
      }),
    );
    try {
      behaviour = 'answer';
      const r = await post(
        other.url,
        {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        as('alice'),
      );
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe(-32014);
    } finally {
      await other.stop();
    }
  });

  it('config: introspection needs its endpoint and credentials; a ${VAR} secret must be set', () => {
    expect(() => exampleConfig({ auth: { mode: 'introspection' } })).toThrow(
      /auth\.resource[\s\S]*auth\.introspection[\s\S]*auth\.authorizationServers/,
    );
    expect(() =>
      exampleConfig({
        auth: {
          mode: 'introspection',
          resource: RESOURCE,
          authorizationServers: [ISSUER],
          introspection: { url: introspectionUrl, clientId: 'x', clientSecret: '${NOT_SET_ANYWHERE}' },
        },
      }),
    ).toThrow(/auth\.introspection\.clientSecret: environment variable NOT_SET_ANYWHERE is not set/);
  });
});
