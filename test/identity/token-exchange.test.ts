/**
 * Calls as the user (issue 19): an upstream with `oauth.grant: token-exchange` gets, for each
 * user, a token of its own exchanged (RFC 8693) for the user's validated access token, from a
 * real authorization server on loopback; discovery goes with the gateway's own token. What must
 * hold: two users reach the upstream with two different tokens (and claim headers), one exchange
 * per user per token lifetime, a refused user gets UPSTREAM_IDENTITY_REFUSED while the other user
 * and the other upstreams go on, refusals never open the circuit, and the client's own token
 * never reaches an upstream.
 */
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { resolveConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { ECHO_SERVER, post, startGateway, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startAuthorizationServer, TEST_CLIENT, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { oneToolResult, startJsonRpcServer } from '../support/json-rpc-http.js';
import { statelessRequest } from '../support/stateless.js';

interface Seen {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
}

let as: AuthorizationServer;
let issuer: JwtIssuer;
let upstream: Server;
let upstreamUrl: string;
let gw: RunningGateway;
const seen: Seen[] = [];
/** Client tokens handed out in this file: none may ever reach the upstream. */
const clientTokens: string[] = [];

/** A session-less MCP server with one tool per path; only tokens the authorization server issued and still holds pass. */
function startUpstream(): Promise<Server> {
  return startJsonRpcServer((msg, req) => {
    seen.push({ path: req.url ?? '', method: String(msg.method), headers: req.headers });
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (req.url === '/crm/mcp' && !as.live.has(bearer))
      return { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } };
    const who = as.live.get(bearer) ?? String(req.headers['x-user'] ?? 'nobody');
    return { result: oneToolResult(msg, 'crm', 'whoami', `you are ${who}`) };
  });
}

function gatewayConfig(extra: Record<string, unknown> = {}, crm: Record<string, unknown> = {}) {
  return resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: issuer.authConfig,
      upstreams: [
        httpUpstream('crm', `${upstreamUrl}/crm/mcp`, {
          oauth: {
            grant: 'token-exchange',
            tokenUrl: as.tokenUrl,
            clientId: TEST_CLIENT.id,
            clientSecret: '${CRM_SECRET}',
            audience: 'urn:crm',
            resource: 'http://127.0.0.1/crm',
            scopes: ['crm:read'],
          },
          headers: { 'X-User': '${claims.sub}' },
          ...crm,
        }),
        // An internal upstream that trusts the gateway: who calls comes as claim headers, no OAuth.
        httpUpstream('hr', `${upstreamUrl}/hr/mcp`, {
          headers: { 'X-User': '${claims.sub}', 'X-Email': '${claims.email}', 'X-Static': 'fixed' },
        }),
        stdioUpstream('echo', ECHO_SERVER),
      ],
      ...extra,
    },
    { CRM_SECRET: TEST_CLIENT.secret },
  );
}

async function connect(
  sub: string,
  claims: Record<string, unknown> = { email: `${sub}@example.test` },
): Promise<Client> {
  const { authorization } = await issuer.bearer(sub, claims);
  clientTokens.push(authorization.slice('Bearer '.length));
  const client = new Client({ name: `as-${sub}`, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(gw.url, { requestInit: { headers: { authorization } } }));
  return client;
}

async function callError(client: Client, name: string): Promise<{ code: number; data: any; message: string }> {
  try {
    await client.callTool({ name, arguments: {} });
  } catch (err) {
    return err as { code: number; data: any; message: string };
  }
  throw new Error(`${name} did not fail`);
}

const toolCalls = (path: string) => seen.filter((s) => s.method === 'tools/call' && s.path === path);

beforeAll(async () => {
  [as, issuer] = await Promise.all([startAuthorizationServer(), startJwtIssuer()]);
  upstream = await startUpstream();
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startGateway(gatewayConfig());
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([as?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
});

describe('token exchange', () => {
  it("two users reach the upstream with two different exchanged tokens, one exchange each however many calls; discovery went with the gateway's own token", async () => {
    const [alice, bob] = await Promise.all([connect('alice'), connect('bob')]);
    for (let i = 0; i < 3; i++) {
      expect(toolText(await alice.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are alice');
      expect(toolText(await bob.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are bob');
    }
    expect(as.exchanges.get('alice')).toBe(1);
    expect(as.exchanges.get('bob')).toBe(1);
    const calls = toolCalls('/crm/mcp');
    const tokensOf = (user: string) =>
      new Set(calls.filter((c) => c.headers['x-user'] === user).map((c) => c.headers.authorization));
    expect([...tokensOf('alice')]).toEqual([expect.stringMatching(/^Bearer ex-alice-\d+$/)]);
    expect([...tokensOf('bob')]).toEqual([expect.stringMatching(/^Bearer ex-bob-\d+$/)]);
    // initialize and tools/list are nobody's: the gateway's client-credentials token, no claim headers.
    const discovery = seen.filter(
      (s) => s.path === '/crm/mcp' && (s.method === 'initialize' || s.method === 'tools/list'),
    );
    expect(discovery.length).toBeGreaterThan(0);
    for (const d of discovery) {
      expect(d.headers.authorization).toMatch(/^Bearer gw-\d+$/);
      expect(d.headers['x-user']).toBeUndefined();
    }
    // The exchange as RFC 8693 has it, authenticated as the gateway's client.
    const form = as.forms.find((f) => f.get('grant_type') === 'urn:ietf:params:oauth:grant-type:token-exchange')!;
    expect(form.get('subject_token_type')).toBe('urn:ietf:params:oauth:token-type:access_token');
    expect(form.get('audience')).toBe('urn:crm');
    expect(form.get('resource')).toBe('http://127.0.0.1/crm');
    expect(form.get('scope')).toBe('crm:read');
    expect(clientTokens).toContain(form.get('subject_token'));
    await Promise.all([alice.close(), bob.close()]);
  });

  it('a refused user gets UPSTREAM_IDENTITY_REFUSED naming the upstream; the other user and the other upstreams go on, and the circuit stays closed', async () => {
    as.refuse.add('mallory');
    const [mallory, alice] = await Promise.all([connect('mallory'), connect('alice')]);
    for (let i = 0; i < 5; i++) {
      const err = await callError(mallory, 'crm__whoami');
      expect(err.code).toBe(-32013);
      expect(err.data).toMatchObject({ type: 'UPSTREAM_IDENTITY_REFUSED', upstream: 'crm', reason: 'invalid_grant' });
      expect(err.message).toContain('crm');
    }
    // Past breaker.failureThreshold (3) refusals: still closed for everyone else.
    expect(toolText(await alice.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are alice');
    expect(toolText(await mallory.callTool({ name: 'echo__echo', arguments: { text: 'still here' } }))).toBe(
      'still here',
    );
    expect(toolText(await mallory.callTool({ name: 'hr__whoami', arguments: {} }))).toBe('you are mallory');
    const status = (await (await fetch(`${gw.base}/readyz`)).json()) as any;
    expect(status.upstreams.crm).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
    as.refuse.delete('mallory');
    await Promise.all([mallory.close(), alice.close()]);
  });

  it('a revoked exchanged token is exchanged again once and the call succeeds; expiry brings a new exchange', async () => {
    const carol = await connect('carol');
    expect(toolText(await carol.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are carol');
    const first = toolCalls('/crm/mcp').findLast((c) => c.headers['x-user'] === 'carol')!.headers.authorization!;
    as.revoke(first.replace('Bearer ', ''));
    expect(toolText(await carol.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are carol');
    expect(as.exchanges.get('carol')).toBe(2);
    await carol.close();

    // A token that lives 1 s is renewed 0.1 s before it ends: a call after that exchanges again.
    as.expiresIn = 1;
    const dave = await connect('dave');
    expect(toolText(await dave.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are dave');
    expect(toolText(await dave.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are dave');
    expect(as.exchanges.get('dave')).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    expect(toolText(await dave.callTool({ name: 'crm__whoami', arguments: {} }))).toBe('you are dave');
    expect(as.exchanges.get('dave')).toBe(2);
    as.expiresIn = 3600;
    await dave.close();
  });

  it("concurrent first calls of one user share one exchange; a token endpoint that refuses the gateway's own credentials is the upstream's failure, not the user's", async () => {
    const judy = await connect('judy');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => judy.callTool({ name: 'crm__whoami', arguments: {} })),
    );
    expect(answers.map(toolText)).toEqual(Array(5).fill('you are judy'));
    expect(as.exchanges.get('judy')).toBe(1);
    await judy.close();

    // (On a path that lists without a token, so only the exchange can fail.)
    const wrongSecret = await startGateway(
      gatewayConfig(
        {},
        {
          url: `${upstreamUrl}/open/mcp`,
          oauth: {
            grant: 'token-exchange',
            tokenUrl: as.tokenUrl,
            clientId: TEST_CLIENT.id,
            clientSecret: 'not-the-secret',
            audience: 'urn:crm',
          },
          discovery: 'anonymous',
        },
      ),
    );
    try {
      const { authorization } = await issuer.bearer('kim', { email: 'kim@example.test' });
      const init = await post(
        wrongSecret.url,
        {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        { authorization },
      );
      const headers = {
        authorization,
        'mcp-session-id': init.headers.get('mcp-session-id')!,
        'mcp-protocol-version': '2025-11-25',
      };
      const res = await post(
        wrongSecret.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crm__whoami', arguments: {} } },
        headers,
      );
      expect(res.json.error.data).toMatchObject({ type: 'UPSTREAM_UNAVAILABLE', upstream: 'crm' });
      expect(res.json.error.message).toContain('invalid_client');
      const ready = (await (await fetch(`${wrongSecret.base}/readyz`)).json()) as any;
      expect(ready.upstreams.crm.consecutiveFailures).toBeGreaterThan(0);
    } finally {
      await wrongSecret.stop();
    }
  });

  it('a stateless (2026-07-28) call goes as its user too', async () => {
    const { authorization } = await issuer.bearer('erin', { email: 'erin@example.test' });
    clientTokens.push(authorization.slice('Bearer '.length));
    const { body, headers } = statelessRequest(1, 'tools/call', { name: 'crm__whoami', arguments: {} });
    const res = await post(gw.url, body, { ...headers, authorization });
    expect(res.status).toBe(200);
    expect(toolText(res.json.result)).toBe('you are erin');
    expect(as.exchanges.get('erin')).toBe(1);
  });

  it("the client's own token never reaches an upstream, in any header of any request", () => {
    expect(seen.length).toBeGreaterThan(10);
    const everything = JSON.stringify(seen);
    for (const t of clientTokens) expect(everything).not.toContain(t);
  });
});

describe('logs', () => {
  it("neither the client's token nor an exchanged one is ever logged, at debug level, through grants and refusals", async () => {
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
    const gateway = await buildApp(gatewayConfig({ logLevel: 'debug' }), { logger, defaultMetrics: false });
    const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = new URL('/mcp', address);
      as.refuse.add('leo');
      const tokens: string[] = [];
      for (const sub of ['leo', 'mia']) {
        const { authorization } = await issuer.bearer(sub, { email: `${sub}@example.test` });
        tokens.push(authorization.slice('Bearer '.length));
        const client = new Client({ name: sub, version: '1' });
        await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization } } }));
        await client.callTool({ name: 'crm__whoami', arguments: {} }).catch(() => undefined);
        await client.close();
      }
      as.refuse.delete('leo');
      expect(lines.length).toBeGreaterThan(5);
      const log = lines.join('');
      for (const t of tokens) expect(log).not.toContain(t);
      for (const issued of as.live.keys()) expect(log).not.toContain(issued);
    } finally {
      await gateway.close();
    }
  });
});

describe('claim headers', () => {
  it('an internal upstream gets who calls as headers from the claims, beside its fixed headers', async () => {
    const frank = await connect('frank');
    expect(toolText(await frank.callTool({ name: 'hr__whoami', arguments: {} }))).toBe('you are frank');
    const call = toolCalls('/hr/mcp').findLast((c) => c.headers['x-user'] === 'frank')!;
    expect(call.headers).toMatchObject({ 'x-email': 'frank@example.test', 'x-static': 'fixed' });
    expect(call.headers.authorization).toBeUndefined();
    await frank.close();
  });

  it('a claim with CR/LF or control characters, or a missing claim, fails the call with CLAIM_HEADER_INVALID before anything is sent', async () => {
    const before = toolCalls('/hr/mcp').length;
    const smuggler = await connect('gina', { email: 'gina@example.test\r\nX-Admin: yes' });
    const err = await callError(smuggler, 'hr__whoami');
    expect(err.code).toBe(-32602);
    expect(err.data).toMatchObject({ type: 'CLAIM_HEADER_INVALID', header: 'X-Email' });
    const noEmail = await connect('hank', {});
    expect((await callError(noEmail, 'hr__whoami')).data).toMatchObject({
      type: 'CLAIM_HEADER_INVALID',
      claim: 'email',
    });
    const tab = await connect('ivy', { email: 'ivy\u0007@example.test' });
    expect((await callError(tab, 'hr__whoami')).data.type).toBe('CLAIM_HEADER_INVALID');
    expect(toolCalls('/hr/mcp').length).toBe(before);
    expect(seen.some((s) => s.headers['x-admin'] !== undefined)).toBe(false);
    // The same sessions go on where no claim header is involved.
    expect(toolText(await smuggler.callTool({ name: 'echo__echo', arguments: { text: 'ok' } }))).toBe('ok');
    await Promise.all([smuggler.close(), noEmail.close(), tab.close()]);
  });
});

describe('config', () => {
  it('calls as the user need auth on and transport http; Redis needs secrets.keys; discovery anonymous needs a per-user grant', () => {
    expect(() => gatewayConfig({ auth: { mode: 'none' } })).toThrow(
      /upstreams\[0\]\.oauth\.grant token-exchange: needs auth\.mode jwt or introspection[\s\S]*upstreams\[1\]\.headers with \$\{claims\.…\}: needs auth\.mode/,
    );
    expect(() => gatewayConfig({ sessions: { store: 'redis', redisUrl: 'redis://127.0.0.1:1' } })).toThrow(
      /secrets\.keys: is required when sessions\.store is "redis"/,
    );
    expect(() =>
      gatewayConfig({}, { oauth: { tokenUrl: as.tokenUrl, clientId: 'x', clientSecret: 'y' }, discovery: 'anonymous' }),
    ).toThrow(/upstreams\[0\]\.discovery: applies to oauth\.grant token-exchange or authorization-code only/);
    expect(() => gatewayConfig({}, { headers: { 'X-User': '${claims.no-such}' } })).toThrow(/names no claim/);
  });
});
