/**
 * A remote upstream behind OAuth: the gateway gets its own bearer token by the client credentials
 * grant (`upstreams[].oauth`) from a real token endpoint on loopback, and an HTTP MCP server that
 * takes only live tokens checks every request. What must hold: one token for many calls, a
 * revoked token replaced without the client noticing, renewal before expiry, a failing token
 * endpoint as a typed error on that upstream only, and config mistakes named at start-up.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import {
  ECHO_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { oneToolHandler } from '../support/one-tool-server.js';

const CLIENT = { id: 'mcp-gateway', secret: 'cl13nt/secret' };
const RESOURCE = 'http://127.0.0.1/remote-mcp';

/** The authorization server: issues tok-1, tok-2, … and remembers which are live. */
const issuer = {
  mode: 'ok' as 'ok' | 'fail',
  expiresIn: 3600,
  issued: 0,
  live: new Set<string>(),
  forms: [] as URLSearchParams[],
};
/** What reached the MCP server: each request's Authorization, and how many it refused. */
const upstream = { seen: [] as string[], refused: 0 };

let tokenServer: Server;
let mcpServer: Server;
let tokenUrl: string;
let mcpUrl: string;
let gw: RunningGateway;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => resolve(body));
  });
}

beforeAll(async () => {
  tokenServer = createServer(async (req, res) => {
    const form = new URLSearchParams(await readBody(req));
    issuer.forms.push(form);
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT.id)}:${encodeURIComponent(CLIENT.secret)}`).toString('base64')}`;
    if (req.headers.authorization !== basic)
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
    if (issuer.mode === 'fail') return void res.writeHead(503).end('maintenance');
    const token = `tok-${++issuer.issued}`;
    issuer.live.add(token);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: issuer.expiresIn }));
  });
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
  tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;

  const handler = oneToolHandler('lookup', 'found it');
  mcpServer = createServer((req, res) => {
    const authorization = req.headers.authorization ?? '';
    upstream.seen.push(authorization);
    if (!issuer.live.has(authorization.replace(/^Bearer /, ''))) {
      upstream.refused++;
      return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    }
    handler(req, res);
  });
  await new Promise<void>((r) => mcpServer.listen(0, '127.0.0.1', r));
  mcpUrl = `http://127.0.0.1:${(mcpServer.address() as AddressInfo).port}/mcp`;

  const config = resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      upstreams: [
        httpUpstream('remote', mcpUrl, {
          oauth: {
            tokenUrl,
            clientId: CLIENT.id,
            clientSecret: '${REMOTE_CLIENT_SECRET}',
            scopes: ['mcp:tools', 'mcp:read'],
            resource: RESOURCE,
          },
        }),
        stdioUpstream('echo', ECHO_SERVER),
      ],
    },
    { REMOTE_CLIENT_SECRET: CLIENT.secret },
  );
  gw = await startGateway(config);
});

afterAll(async () => {
  await gw?.stop();
  await new Promise((r) => tokenServer?.close(r));
  await new Promise((r) => mcpServer?.close(r));
});

const call = (sid: string, name: string, args: Record<string, unknown> = {}) =>
  post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );

describe('an upstream behind OAuth (client credentials)', () => {
  it('gets one token for the start-up and many calls, asked with scope and resource, and sends it on every request', async () => {
    const sid = await openSession(gw.url);
    for (let i = 0; i < 5; i++)
      expect((await call(sid, 'remote__lookup')).json.result.content[0].text).toBe('found it');
    expect(issuer.issued).toBe(1);
    expect(Object.fromEntries(issuer.forms[0]!)).toEqual({
      grant_type: 'client_credentials',
      scope: 'mcp:tools mcp:read',
      resource: RESOURCE,
    });
    expect(new Set(upstream.seen)).toEqual(new Set(['Bearer tok-1']));
    expect(upstream.refused).toBe(0);
  });

  it("a revoked token: the upstream's 401 gets a new token and one more try, and the client never notices", async () => {
    const sid = await openSession(gw.url);
    issuer.live.clear();
    const issued = issuer.issued;
    expect((await call(sid, 'remote__lookup')).json.result.content[0].text).toBe('found it');
    expect(issuer.issued).toBe(issued + 1);
    expect(upstream.refused).toBe(1);
    expect(upstream.seen.at(-1)).toBe(`Bearer tok-${issuer.issued}`);
  });

  it('renews a token before it expires, without a refused request', async () => {
    const sid = await openSession(gw.url);
    issuer.expiresIn = 1;
    issuer.live.clear(); // the next call gets a token that lives 1 s
    expect((await call(sid, 'remote__lookup')).status).toBe(200);
    const short = issuer.issued;
    const refused = upstream.refused;
    issuer.expiresIn = 3600;
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(sid, 'remote__lookup')).json.result.content[0].text).toBe('found it');
    expect(issuer.issued).toBe(short + 1);
    expect(upstream.refused).toBe(refused);
  });

  it('a failing token endpoint: calls to that upstream fail typed and fast; the others work; it recovers', async () => {
    const sid = await openSession(gw.url);
    issuer.mode = 'fail';
    issuer.live.clear();
    const r = await call(sid, 'remote__lookup');
    expect(r.status).toBe(200);
    expect(r.json.error.code).toBe(-32004);
    expect(r.json.error.message).toMatch(/token endpoint answered HTTP 503/);
    expect((await call(sid, 'echo__echo', { text: 'still here' })).json.result.content[0].text).toBe('still here');
    issuer.mode = 'ok';
    const deadline = Date.now() + 5000;
    let text: string | undefined;
    while (Date.now() < deadline && text !== 'found it') {
      text = (await call(sid, 'remote__lookup')).json?.result?.content?.[0]?.text;
      if (text !== 'found it') await new Promise((res) => setTimeout(res, 100));
    }
    expect(text).toBe('found it');
  });

  it('config: oauth with an Authorization header, a bad token URL or an unset ${VAR} secret is a start-up error naming the key', () => {
    const remote = (oauth: Record<string, unknown>, headers: Record<string, string> = {}) =>
      exampleConfig({ upstreams: [httpUpstream('remote', mcpUrl, { oauth, headers })] });
    expect(() => remote({ tokenUrl, clientId: 'x', clientSecret: 'y' }, { Authorization: 'Bearer static' })).toThrow(
      /upstreams\[0\]\.headers\.Authorization: cannot be set with upstreams\[0\]\.oauth/,
    );
    expect(() => remote({ tokenUrl: 'ftp://nope', clientId: 'x', clientSecret: 'y' })).toThrow(/oauth\.tokenUrl/);
    expect(() => remote({ tokenUrl, clientId: 'x', clientSecret: '${NOT_SET_ANYWHERE}' })).toThrow(
      /upstreams\[0\]\.oauth\.clientSecret: environment variable NOT_SET_ANYWHERE is not set/,
    );
  });
});
