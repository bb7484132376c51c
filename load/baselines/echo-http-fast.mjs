// @ts-check
// A minimal Streamable HTTP MCP server for the call-http scenario: node:http, JSON replies,
// one session id per initialize, tools `echo` only. The official SDK's HTTP server spends
// about a millisecond per request on its own (it, not the gateway, would be measured), so the
// HTTP-upstream path is measured against this, as the stdio path is against a fast stdio server.
//
//   node load/baselines/echo-http-fast.mjs   → prints "listening on http://127.0.0.1:PORT/mcp"
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const sessions = new Set();
const TOOLS = [
  {
    name: 'echo',
    description: 'Echoes text',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

/** @param {any} req */
function answer(req) {
  switch (req.method) {
    case 'initialize':
      return {
        protocolVersion: req.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'echo-http-fast', version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: TOOLS };
    case 'tools/call':
      return { content: [{ type: 'text', text: String(req.params?.arguments?.text ?? '') }] };
    default:
      return undefined;
  }
}

const server = createServer((request, response) => {
  const sid = request.headers['mcp-session-id'];
  if (request.method === 'DELETE') {
    response.writeHead(sessions.delete(sid) ? 200 : 404).end();
    return;
  }
  if (request.method !== 'POST') {
    response.writeHead(405, { allow: 'POST, DELETE' }).end();
    return;
  }
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (c) => (body += c));
  request.on('end', () => {
    /** @type {any} */
    let msg;
    try {
      msg = JSON.parse(body);
    } catch {
      response.writeHead(400).end();
      return;
    }
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json' };
    if (msg.method === 'initialize') {
      const id = randomUUID();
      sessions.add(id);
      headers['mcp-session-id'] = id;
    } else if (typeof sid !== 'string' || !sessions.has(sid)) {
      response
        .writeHead(404, headers)
        .end(
          JSON.stringify({ jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32001, message: 'Session not found' } }),
        );
      return;
    }
    if (msg.id === undefined) {
      response.writeHead(202).end();
      return;
    }
    const result = answer(msg);
    const reply =
      result === undefined
        ? { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }
        : { jsonrpc: '2.0', id: msg.id, result };
    response.writeHead(200, headers).end(JSON.stringify(reply));
  });
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`listening on http://127.0.0.1:${address.port}/mcp\n`);
});
