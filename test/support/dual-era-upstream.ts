/**
 * A Streamable HTTP MCP server on loopback, in this process, that speaks 2026-07-28 (stateless:
 * server/discover, `_meta` on every request) and, with `dual`, 2025-06-18 too (initialize, a
 * session id). It records each request it gets with the era it arrived in, its headers and
 * `_meta`, so tests see how the gateway spoke to it. Tools: `whoami` (the caller as its headers
 * say), `refuse` (a JSON-RPC error with an HTTP 4xx status, as some 2026 servers answer).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  era: '2025' | '2026';
  method: string;
  name?: string;
  headers: IncomingHttpHeaders;
  meta: Record<string, unknown> | undefined;
}

export interface DualEraUpstream {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

const MODERN = '2026-07-28';
const SESSION_ERA = '2025-06-18';
const PV = 'io.modelcontextprotocol/protocolVersion';
/** The error `refuse` answers, with HTTP 403. */
export const REFUSAL = { code: -32042, message: 'Refused by policy: not for this caller', data: { reason: 'policy', retry: false } };

export async function startDualEraUpstream(options: { dual?: boolean } = {}): Promise<DualEraUpstream> {
  const seen: SeenRequest[] = [];
  let sessions = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      const meta = msg.params?._meta;
      const era = msg.method === 'initialize' || req.headers['mcp-session-id'] !== undefined || meta?.[PV] !== MODERN ? '2025' : '2026';
      seen.push({ era, method: msg.method, ...(typeof msg.params?.name === 'string' ? { name: msg.params.name } : {}), headers: req.headers, meta });
      if (msg.id === undefined) return void res.writeHead(202).end();
      const send = (status: number, payload: object, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...payload }));
      if (era === '2025' && !options.dual) return send(400, { error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [MODERN] } } });
      const done = (result: object) => send(200, { result: era === '2026' ? { resultType: 'complete', ...result } : result });
      switch (msg.method) {
        case 'initialize':
          return send(200, { result: { protocolVersion: SESSION_ERA, capabilities: { tools: {} }, serverInfo: { name: 'dual', version: '1' } } }, { 'mcp-session-id': `s${++sessions}` });
        case 'server/discover':
          return done({ supportedVersions: options.dual ? [SESSION_ERA, MODERN] : [MODERN], capabilities: { tools: {} }, serverInfo: { name: 'dual', version: '1' } });
        case 'tools/list':
          return done({ tools: [{ name: 'whoami', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } }, { name: 'refuse', inputSchema: { type: 'object' } }] });
        case 'tools/call':
          if (msg.params.name === 'refuse') return send(403, { error: REFUSAL });
          return done({ content: [{ type: 'text', text: `${era}: you are ${String(req.headers['x-user'] ?? 'nobody')} (${String(req.headers.authorization ?? 'no token')})` }] });
        default:
          return done({});
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
