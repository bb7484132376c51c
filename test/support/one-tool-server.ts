/**
 * The request handler of a Streamable HTTP MCP server with one tool, JSON replies and no
 * sessions: for tests that need to see what reaches an upstream over HTTP(S), on a server of
 * their own making (node:http or node:https).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function oneToolHandler(tool: string, answer: string, onRequest?: (req: IncomingMessage) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    onRequest?.(req);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === 'initialize'
          ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: `${tool}-server`, version: '1' } }
          : msg.method === 'tools/list'
            ? { tools: [{ name: tool, inputSchema: { type: 'object' } }] }
            : msg.method === 'tools/call'
              ? { content: [{ type: 'text', text: answer }] }
              : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  };
}
