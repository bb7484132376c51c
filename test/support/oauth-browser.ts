/**
 * The user's side of grant authorization-code in tests: a "browser" that follows the link a
 * call was answered with (gateway /oauth/start → the authorization server's /authorize, where
 * the test server auto-approves for the user named in x-test-user → the gateway's
 * /oauth/callback), one hop at a time so each can be checked. And a gateway on a port chosen
 * before it starts (its redirectUri must name it), and an MCP upstream that takes only tokens
 * the authorization server holds live.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../src/app.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import type { AuthorizationServer } from './authorization-server.js';
import type { RunningGateway } from './gateway.js';

export interface Consent {
  /** Where /oauth/start sent the browser (the authorization server's /authorize, with PKCE). */
  authorize: URL;
  /** Where the authorization server sent it back (the gateway's /oauth/callback, with code and state). */
  callback: URL;
  status: number;
  page: string;
  headers: Headers;
}

/** Follows a /oauth/start link as `user`'s browser, to the callback's page. */
export async function consent(link: string, user: string): Promise<Consent> {
  const start = await fetch(link, { redirect: 'manual' });
  if (start.status !== 302) throw new Error(`/oauth/start answered ${start.status}: ${await start.text()}`);
  const authorize = new URL(start.headers.get('location')!);
  const approved = await fetch(authorize, { redirect: 'manual', headers: { 'x-test-user': user } });
  if (approved.status !== 302) throw new Error(`/authorize answered ${approved.status}`);
  const callback = new URL(approved.headers.get('location')!);
  const res = await fetch(callback, { redirect: 'manual' });
  return { authorize, callback, status: res.status, page: await res.text(), headers: res.headers };
}

/** A gateway listening on `port` (so its config can name its own callback before it starts). */
export async function startGatewayOn(config: GatewayConfig, port: number): Promise<RunningGateway> {
  const gateway = await buildApp(config, { logger: createLogger(config.logLevel), defaultMetrics: false });
  const address = await gateway.app.listen({ host: '127.0.0.1', port });
  return { gateway, url: new URL(config.path, address), base: address, stop: () => gateway.close() };
}

export interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
}

/**
 * A session-less MCP server with one tool, whoami: initialize and lists for anyone (discovery
 * anonymous), tools/call only with a bearer token `as` holds live (401 otherwise).
 */
export function startUserUpstream(as: AuthorizationServer, seen: Seen[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      seen.push({ method: msg.method, headers: req.headers });
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (msg.method === 'tools/call' && !as.live.has(bearer)) return void res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === 'initialize'
          ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'crm', version: '1' } }
          : msg.method === 'tools/list'
            ? { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }
            : msg.method === 'tools/call'
              ? { content: [{ type: 'text', text: `you are ${as.live.get(bearer)}` }] }
              : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

export const upstreamUrl = (server: Server, path = '/mcp') => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
