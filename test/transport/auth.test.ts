/**
 * The gateway as an OAuth 2.1 resource server: bearer JWTs checked against an issuer's keys
 * (served by a real JWKS endpoint on loopback), 401/403 with the RFC 6750 / RFC 9728 challenge,
 * protected resource metadata, sessions bound to the principal that opened them, stateless
 * requests checked alike, and the client's token never passed to an upstream.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import {
  ROOT,
  exampleConfig,
  post,
  startGateway,
  stdioUpstream,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';
import { statelessMeta, statelessRequest } from '../support/stateless.js';
import { httpUpstream, startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { oneToolHandler } from '../support/one-tool-server.js';

const RESOURCE = 'http://127.0.0.1/mcp';
const ISSUER = 'http://127.0.0.1/issuer';
const METADATA = 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp';

let keys: { privateKey: CryptoKey; publicKey: CryptoKey };
let strangerKey: CryptoKey;
let jwks: Server;
let echo: HttpServerProcess;
let gw: RunningGateway;

/** `expiresIn: null` signs a token without an exp claim. */
function token(
  claims: Record<string, unknown> = {},
  o: { key?: CryptoKey; expiresIn?: string | null } = {},
): Promise<string> {
  const jwt = new SignJWT({ scope: 'mcp:tools', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer((claims.iss as string) ?? ISSUER)
    .setAudience((claims.aud as string) ?? RESOURCE)
    .setSubject((claims.sub as string) ?? 'alice')
    .setIssuedAt();
  if (o.expiresIn !== null) jwt.setExpirationTime(o.expiresIn ?? '5m');
  return jwt.sign(o.key ?? keys.privateKey);
}

const bearer = async (claims?: Record<string, unknown>, o?: { key?: CryptoKey; expiresIn?: string | null }) => ({
  authorization: `Bearer ${await token(claims, o)}`,
});

function initialize(headers: Record<string, string>) {
  return post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } },
    },
    headers,
  );
}

beforeAll(async () => {
  keys = await generateKeyPair('RS256');
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  echo = await startEchoHttp();
  gw = await startGateway(
    exampleConfig({
      auth: {
        mode: 'jwt',
        resource: RESOURCE,
        issuer: ISSUER,
        jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`,
        authorizationServers: [ISSUER],
        requiredScopes: ['mcp:tools'],
        // Calling this one tool takes a scope of its own.
        toolScopes: [{ tools: ['remote__ec*'], scopes: ['mcp:echo'] }],
      },
      upstreams: [
        httpUpstream('remote', echo.url, { headers: { 'x-upstream-key': 'configured-secret' } }),
        stdioUpstream('fx', resolve(ROOT, 'examples/conformance/server.mjs'), { mode: 'per-session' }),
      ],
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
  await echo?.stop();
  await new Promise((r) => jwks?.close(r));
});

describe('bearer tokens', () => {
  it('no token: 401 with a challenge naming the protected resource metadata, which is served', async () => {
    const r = await initialize({});
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${METADATA}", scope="mcp:tools"`);
    expect(r.json.error).toMatchObject({ code: -32012, data: { type: 'UNAUTHORIZED' } });
    const metadata = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', gw.base)).then((res) =>
      res.json(),
    );
    // Every scope a challenge can name: the required one and the one toolScopes asks for.
    expect(metadata).toEqual({
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp:tools', 'mcp:echo'],
    });
  });

  const rejected: Array<[string, () => Promise<Record<string, string>>, RegExp]> = [
    ['a token that is not a JWT', async () => ({ authorization: 'Bearer not.a.jwt' }), /error="invalid_token"/],
    [
      'an expired token',
      () => bearer({}, { expiresIn: '-10m' }),
      /error="invalid_token", error_description="the token has expired"/,
    ],
    // RFC 9068: a JWT access token carries exp; one without it would never expire.
    [
      'a token without exp',
      () => bearer({}, { expiresIn: null }),
      /error="invalid_token", error_description="the token has no exp claim"/,
    ],
    [
      'a token for another resource',
      () => bearer({ aud: 'http://127.0.0.1/other' }),
      /the token's aud claim is not accepted/,
    ],
    [
      'a token of another issuer',
      () => bearer({ iss: 'http://127.0.0.1/evil' }),
      /the token's iss claim is not accepted/,
    ],
    ['a token signed with another key', () => bearer({}, { key: strangerKey }), /error="invalid_token"/],
    ['a Basic credential', async () => ({ authorization: 'Basic YWxpY2U6c2VjcmV0' }), /^Bearer resource_metadata=/],
  ];
  for (const [name, headers, challenge] of rejected) {
    it(`${name}: 401 invalid_token, and nothing else is disturbed`, async () => {
      const r = await initialize(await headers());
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(challenge);
      expect(r.json.error.data.type).toBe('UNAUTHORIZED');
      expect((await initialize(await bearer())).status).toBe(200);
    });
  }

  it('a token without the required scope: 403 insufficient_scope', async () => {
    const r = await initialize(await bearer({ scope: 'mcp:read' }));
    expect(r.status).toBe(403);
    expect(r.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${METADATA}", error="insufficient_scope", scope="mcp:tools"`,
    );
    expect(r.json.error).toMatchObject({ code: -32013, data: { type: 'INSUFFICIENT_SCOPE' } });
  });

  it('health and metrics need no token', async () => {
    expect((await fetch(new URL('/healthz', gw.base))).status).toBe(200);
    expect((await fetch(new URL('/metrics', gw.base))).status).toBe(200);
  });
});

describe('with a valid token', () => {
  it('the SDK client works the whole flow', async () => {
    const client = new Client({ name: 'auth-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(gw.url, {
        requestInit: { headers: await bearer({ scope: 'mcp:tools mcp:echo' }) },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('remote__echo');
      expect(toolText(await client.callTool({ name: 'remote__echo', arguments: { text: 'authorized' } }))).toBe(
        'authorized',
      );
    } finally {
      await client.close();
    }
  });

  it('a tool with its own scope: 403 insufficient_scope naming it, for sessions and stateless requests; other tools work', async () => {
    const headers = await bearer();
    const sid = (await initialize(headers)).headers.get('mcp-session-id')!;
    const session = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const denied = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remote__echo', arguments: { text: 'x' } } },
      session,
    );
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${METADATA}", error="insufficient_scope", scope="mcp:echo"`,
    );
    expect(denied.json.error.data.type).toBe('INSUFFICIENT_SCOPE');
    // The list follows the token: a tool it cannot call is not offered.
    const list = await post(gw.url, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, session);
    const names = list.json.result.tools.map((t: { name: string }) => t.name);
    expect(names).not.toContain('remote__echo');
    expect(names).toContain('fx__test_simple_text');
    const list2026 = statelessRequest(5, 'tools/list');
    const statelessList = await post(gw.url, list2026.body, {
      ...(await bearer({ scope: 'mcp:tools mcp:echo' })),
      ...list2026.headers,
    });
    expect(statelessList.json.result.tools.map((t: { name: string }) => t.name)).toContain('remote__echo');
    // Lists that depend on the token must not be shared between tokens.
    expect(statelessList.json.result.cacheScope).toBe('private');
    const other = await post(
      gw.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fx__test_simple_text', arguments: {} } },
      session,
    );
    expect(other.json.result.content[0].text).toBe('This is a simple text response for testing.');
    const call2026 = statelessRequest(3, 'tools/call', { name: 'remote__echo', arguments: { text: 'x' } });
    const stateless = await post(gw.url, call2026.body, { ...headers, ...call2026.headers });
    expect(stateless.status).toBe(403);
  });

  it("a session is its principal's: another valid token gets 404 for it", async () => {
    const alice = await bearer({ sub: 'alice' });
    const sid = (await initialize(alice)).headers.get('mcp-session-id')!;
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const asBob = await post(gw.url, list, {
      ...(await bearer({ sub: 'bob' })),
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-11-25',
    });
    expect(asBob.status).toBe(404);
    expect(asBob.json.error.data.type).toBe('SESSION_NOT_FOUND');
    const asAlice = await post(gw.url, list, { ...alice, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    expect(asAlice.status).toBe(200);
    expect(asAlice.json.result.tools.length).toBeGreaterThan(0);
  });

  it('stateless (2026-07-28) requests are checked alike', async () => {
    const { body, headers } = statelessRequest(2, 'tools/call', {
      name: 'remote__echo',
      arguments: { text: 'stateless' },
    });
    expect((await post(gw.url, body, headers)).status).toBe(401);
    const ok = await post(gw.url, body, { ...headers, ...(await bearer({ scope: 'mcp:tools mcp:echo' })) });
    expect(ok.status).toBe(200);
    expect(ok.json.result.content[0].text).toBe('stateless');
  });

  it('an input-required round trip can be continued only by the principal that started it', async () => {
    const call = async (sub: string, id: number, extra: Record<string, unknown> = {}) => {
      const { body, headers } = statelessRequest(id, 'tools/call', {
        name: 'fx__test_elicitation',
        arguments: { message: 'who?' },
        ...extra,
        _meta: statelessMeta({ elicitation: {} }),
      });
      return post(gw.url, body, { ...headers, ...(await bearer({ sub })) });
    };
    const first = (await call('alice', 1)).json.result;
    expect(first.resultType).toBe('input_required');
    const [key] = Object.keys(first.inputRequests);
    const retry = { inputResponses: { [key!]: { action: 'decline' } }, requestState: first.requestState };
    expect((await call('bob', 2, retry)).json.error).toMatchObject({ code: -32602 });
    expect(toolText((await call('alice', 3, retry)).json.result)).toBe('User response: action=decline, content={}');
  });

  it("the upstream never sees the client's token, only its own configured credentials", async () => {
    const seen: IncomingHttpHeaders[] = [];
    // A remote upstream that records what it is sent, in front of nothing but itself.
    const recorder = createServer(oneToolHandler('rec', 'recorded', (req) => seen.push(req.headers)));
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
    const gw2 = await startGateway(
      exampleConfig({
        auth: {
          mode: 'jwt',
          resource: RESOURCE,
          issuer: ISSUER,
          jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`,
          authorizationServers: [ISSUER],
        },
        upstreams: [
          httpUpstream('rec', `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/mcp`, {
            headers: { authorization: 'Bearer upstream-own-credential' },
          }),
        ],
      }),
    );
    try {
      const client = new Client({ name: 'auth-passthrough', version: '1.0.0' });
      const clientToken = await token();
      await client.connect(
        new StreamableHTTPClientTransport(gw2.url, {
          requestInit: { headers: { authorization: `Bearer ${clientToken}` } },
        }),
      );
      expect(toolText(await client.callTool({ name: 'rec__rec', arguments: {} }))).toBe('recorded');
      await client.close();
      expect(seen.length).toBeGreaterThan(2);
      for (const h of seen) expect(h.authorization).toBe('Bearer upstream-own-credential');
      expect(JSON.stringify(seen)).not.toContain(clientToken);
    } finally {
      await gw2.stop();
      await new Promise((r) => recorder.close(r));
    }
  });
});

describe('config', () => {
  it('jwt mode without its issuer, keys or resource is a start-up error naming each key', async () => {
    expect(() => exampleConfig({ auth: { mode: 'jwt' } })).toThrow(
      /auth\.resource[\s\S]*auth\.issuer[\s\S]*auth\.jwksUrl[\s\S]*auth\.authorizationServers/,
    );
  });
});
