/**
 * Exchanged tokens across replicas, and discovery without a token: two gateways on one real
 * redis-server share each user's exchanged token through the token store (one exchange, whichever
 * replica calls), Redis holds it only sealed, and `discovery: anonymous` initializes and lists
 * with no Authorization at all while calls still go as the user.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { resolveConfig } from '../../src/config/load.js';
import { MCP_HEADERS, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startAuthorizationServer, TEST_CLIENT, type AuthorizationServer } from '../support/authorization-server.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { startRedis, type RedisServer } from '../support/redis.js';

let as: AuthorizationServer;
let issuer: JwtIssuer;
let redis: RedisServer;
let upstream: Server;
let replicas: RunningGateway[] = [];
const seen: Array<{ method: string; headers: IncomingHttpHeaders }> = [];

function startUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const msg = JSON.parse(body);
      seen.push({ method: msg.method, headers: req.headers });
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      // Lists for anyone; calls only with a live token.
      if (msg.method === 'tools/call' && !as.live.has(bearer)) return void res.writeHead(401).end();
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === 'initialize'
          ? {
              protocolVersion: msg.params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'docs', version: '1' },
            }
          : msg.method === 'tools/list'
            ? { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }
            : { content: [{ type: 'text', text: `you are ${as.live.get(bearer)}` }] };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

async function session(gw: RunningGateway, authorization: string): Promise<(id: number) => Promise<string>> {
  const init = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    { authorization },
  );
  const sid = init.headers.get('mcp-session-id')!;
  const headers = { authorization, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return async (id) => {
    const res = await post(
      gw.url,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'docs__whoami', arguments: {} } },
      headers,
    );
    return res.json.result ? toolText(res.json.result) : JSON.stringify(res.json.error);
  };
}

beforeAll(async () => {
  [as, issuer, redis] = await Promise.all([startAuthorizationServer(), startJwtIssuer(), startRedis()]);
  upstream = await startUpstream();
  const config = resolveConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      logLevel: 'silent',
      auth: issuer.authConfig,
      sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: 'tx:' },
      secrets: { keys: [{ id: 'k1', key: '${TOKEN_KEY}' }] },
      upstreams: [
        httpUpstream('docs', `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`, {
          discovery: 'anonymous',
          oauth: {
            grant: 'token-exchange',
            tokenUrl: as.tokenUrl,
            clientId: TEST_CLIENT.id,
            clientSecret: TEST_CLIENT.secret,
            audience: 'urn:docs',
          },
        }),
      ],
    },
    { TOKEN_KEY: randomBytes(32).toString('base64') },
  );
  replicas = [await startGateway(config), await startGateway(config)];
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await Promise.all([as?.close(), issuer?.close(), new Promise((r) => upstream?.close(r))]);
  await redis?.stop();
});

describe('token exchange across replicas', () => {
  it('one exchange per user whichever replica calls; Redis holds the exchanged token only sealed', async () => {
    const { authorization } = await issuer.bearer('alice');
    const [onA, onB] = [await session(replicas[0]!, authorization), await session(replicas[1]!, authorization)];
    expect(await onA(1)).toBe('you are alice');
    expect(await onB(1)).toBe('you are alice');
    expect(await onB(2)).toBe('you are alice');
    expect(as.exchanges.get('alice')).toBe(1);
    const client = new Redis(redis.url);
    try {
      const keys = await client.keys('tx:tokens:*');
      expect(keys).toHaveLength(1);
      const raw = (await client.get(keys[0]!))!;
      const issued = [...as.live.entries()].find(([, sub]) => sub === 'alice')![0];
      expect(raw).toMatch(/^v1\.k1\./);
      expect(raw).not.toContain(issued);
      expect(raw).not.toContain('alice');
    } finally {
      client.disconnect();
    }
  });

  it("discovery anonymous: initialize, lists and pings carry no Authorization; calls carry the user's exchanged token", () => {
    const discovery = seen.filter((s) => s.method !== 'tools/call');
    expect(discovery.map((s) => s.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
    for (const d of discovery) expect(d.headers.authorization).toBeUndefined();
    // No client credentials grant was ever asked for.
    expect(as.forms.every((f) => f.get('grant_type') !== 'client_credentials')).toBe(true);
    const calls = seen.filter((s) => s.method === 'tools/call');
    expect(calls.length).toBe(3);
    for (const c of calls) expect(c.headers.authorization).toMatch(/^Bearer ex-alice-\d+$/);
  });
});
