/**
 * The 2026-07-28 wire to an upstream, as it carries who calls and what the upstream answers:
 * - each user's calls go as that user (claim headers, an RFC 8693 exchanged token), as on the
 *   2025 wire, and the gateway's own requests (server/discover, lists) as the gateway;
 * - a JSON-RPC error the upstream answers with an HTTP 4xx reaches the client as that error;
 * - a dual-era upstream (it answers initialize and server/discover) is spoken to in the client's
 *   era: a 2026 client's request statelessly, with its `_meta` and the mirrored Mcp-* headers, a
 *   2025 client's on its session. The upstream records the era each request arrived in.
 * Upstreams: in-process HTTP servers (test/support/dual-era-upstream.ts); clients: raw 2026
 * POSTs and the official SDK v1; a real authorization server and JWT issuer on loopback.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startAuthorizationServer, TEST_CLIENT, type AuthorizationServer } from '../support/authorization-server.js';
import { REFUSAL, startDualEraUpstream, type DualEraUpstream } from '../support/dual-era-upstream.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { statelessMeta, statelessRequest } from '../support/stateless.js';
import { until } from '../support/wait.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let claims: DualEraUpstream;
let exchanged: DualEraUpstream;
let dual: DualEraUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  [as, issuer, claims, exchanged, dual] = await Promise.all([
    startAuthorizationServer(),
    startJwtIssuer(),
    startDualEraUpstream(),
    startDualEraUpstream(),
    startDualEraUpstream({ dual: true }),
  ]);
  gw = await startGateway(
    resolveConfig(
      {
        listen: { host: '127.0.0.1', port: 0 },
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        auth: issuer.authConfig,
        upstreams: [
          httpUpstream('claims', claims.url, { headers: { 'X-User': '${claims.sub}' } }),
          httpUpstream('exch', exchanged.url, {
            oauth: {
              grant: 'token-exchange',
              tokenUrl: as.tokenUrl,
              clientId: TEST_CLIENT.id,
              clientSecret: '${EXCH_SECRET}',
              audience: 'urn:exch',
              scopes: ['x:read'],
            },
            headers: { 'X-User': '${claims.sub}' },
          }),
          httpUpstream('dual', dual.url),
        ],
      },
      { EXCH_SECRET: TEST_CLIENT.secret },
    ),
  );
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([as?.close(), issuer?.close(), claims?.close(), exchanged?.close(), dual?.close()]);
});

async function call2026(
  user: string,
  name: string,
  args: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const { authorization } = await issuer.bearer(user, { email: `${user}@example.test` });
  const { body, headers: h } = statelessRequest(1, 'tools/call', {
    name,
    arguments: args,
    _meta: statelessMeta({ elicitation: {} }),
  });
  return post(gw.url, body, { ...h, ...headers, authorization });
}

async function v1Client(user: string): Promise<Client> {
  const { authorization } = await issuer.bearer(user, { email: `${user}@example.test` });
  const client = new Client({ name: `v1-${user}`, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(gw.url, { requestInit: { headers: { authorization } } }));
  return client;
}

describe('the 2026-07-28 wire carries the caller', () => {
  it('/readyz: both upstreams were learned as 2026-07-28', async () => {
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as {
      upstreams: Record<string, Record<string, unknown>>;
    };
    expect(ready.upstreams.claims).toMatchObject({ era: 'modern' });
    expect(ready.upstreams.exch).toMatchObject({ era: 'modern' });
  });

  it("two users' calls reach the upstream with their own claim header", async () => {
    expect(toolText((await call2026('alice', 'claims__whoami')).json.result)).toMatch(/^2026: you are alice/);
    expect(toolText((await call2026('bob', 'claims__whoami')).json.result)).toMatch(/^2026: you are bob/);
    const calls = claims.seen.filter((s) => s.method === 'tools/call');
    expect(calls.map((c) => [c.era, c.headers['x-user']])).toEqual([
      ['2026', 'alice'],
      ['2026', 'bob'],
    ]);
    // The gateway's own requests are nobody's.
    for (const s of claims.seen.filter((r) => r.method !== 'tools/call')) expect(s.headers['x-user']).toBeUndefined();
  });

  it("two users' calls go with their own exchanged token; discovery with the gateway's", async () => {
    for (let i = 0; i < 2; i++) {
      expect(toolText((await call2026('carol', 'exch__whoami')).json.result)).toMatch(
        /^2026: you are carol \(Bearer ex-carol-\d+\)$/,
      );
      expect(toolText((await call2026('dave', 'exch__whoami')).json.result)).toMatch(
        /^2026: you are dave \(Bearer ex-dave-\d+\)$/,
      );
    }
    expect(as.exchanges.get('carol')).toBe(1);
    expect(as.exchanges.get('dave')).toBe(1);
    const own = exchanged.seen.filter((s) => s.method === 'server/discover' || s.method === 'tools/list');
    expect(own.length).toBeGreaterThan(0);
    for (const s of own) expect(s.headers.authorization).toMatch(/^Bearer gw-\d+$/);
  });

  it('a 2025 session (SDK v1) bridged to the 2026 upstream calls as its user too', async () => {
    const client = await v1Client('erin');
    try {
      expect(toolText(await client.callTool({ name: 'claims__whoami', arguments: {} }))).toMatch(/^2026: you are erin/);
    } finally {
      await client.close();
    }
  });
});

describe('a JSON-RPC error answered with an HTTP 4xx', () => {
  it('reaches a 2026 client as that error (code, message, data), not as UPSTREAM_PROTOCOL_ERROR', async () => {
    const res = await call2026('alice', 'claims__refuse');
    expect(res.json.error).toEqual(REFUSAL);
    // The upstream answered: its circuit stays closed, later calls go on.
    for (let i = 0; i < 4; i++) expect((await call2026('alice', 'claims__refuse')).json.error.code).toBe(REFUSAL.code);
    expect(toolText((await call2026('alice', 'claims__whoami')).json.result)).toMatch(/you are alice/);
  });

  it('reaches a 2025 session client (SDK v1) as that error', async () => {
    const client = await v1Client('bob');
    try {
      const err = await client.callTool({ name: 'claims__refuse', arguments: {} }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(REFUSAL.code);
      expect((err as McpError).message).toContain(REFUSAL.message);
      expect((err as McpError).data).toEqual(REFUSAL.data);
    } finally {
      await client.close();
    }
  });
});

describe('a dual-era upstream is spoken to in the client era', () => {
  it('/readyz: learned as dual (2026-07-28 that speaks 2025 too)', async () => {
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as {
      upstreams: Record<string, Record<string, unknown>>;
    };
    expect(ready.upstreams.dual).toMatchObject({ era: 'dual', protocolVersion: '2026-07-28' });
  });

  it("a 2026 client's call goes statelessly, with its _meta and the Mcp-* headers", async () => {
    const before = dual.seen.length;
    const res = await call2026('frank', 'dual__whoami', { region: 'eu' }, { 'mcp-param-region': 'eu' });
    expect(toolText(res.json.result)).toMatch(/^2026: /);
    const got = dual.seen.slice(before).filter((s) => s.method === 'tools/call');
    expect(got).toHaveLength(1);
    const [req] = got;
    expect(req!.era).toBe('2026');
    expect(req!.headers['mcp-session-id']).toBeUndefined();
    expect(req!.headers).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'whoami',
      'mcp-param-region': 'eu',
    });
    expect(req!.meta).toMatchObject({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1' },
    });
  });

  it("a 2025 client's call keeps its session path (initialize, Mcp-Session-Id)", async () => {
    const before = dual.seen.length;
    const client = await v1Client('grace');
    try {
      expect(toolText(await client.callTool({ name: 'dual__whoami', arguments: {} }))).toMatch(/^2025: /);
    } finally {
      await client.close();
    }
    await until('the call to be recorded', () => dual.seen.slice(before).some((s) => s.method === 'tools/call'), 2000);
    const got = dual.seen.slice(before).filter((s) => s.method === 'tools/call');
    expect(got).toHaveLength(1);
    expect(got[0]!.era).toBe('2025');
    expect(got[0]!.headers['mcp-session-id']).toMatch(/^s\d+$/);
    expect(got[0]!.headers['mcp-protocol-version']).toBe('2025-06-18');
    expect(dual.seen.some((s) => s.method === 'initialize')).toBe(true);
  });
});
