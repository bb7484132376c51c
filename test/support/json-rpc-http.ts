/**
 * Session-less HTTP MCP servers of a few lines for tests: each POST carries one JSON-RPC
 * message, which `handle` answers with a result (sent as JSON, 202 for a notification) or
 * refuses with an HTTP status. Other methods get 405. `oneToolResult` is what a server with one
 * tool answers to initialize, tools/list and tools/call.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A result for the message (`headers` beside content-type), or a refusal with `status`. */
export type HttpAnswer =
  | { result: Record<string, unknown>; headers?: Record<string, string> }
  | { status: number; headers?: Record<string, string> };

/** A JSON-RPC message as a test server reads it. */
export type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: any };

export function jsonRpcHandler(
  handle: (msg: Message, req: IncomingMessage) => HttpAnswer,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body) as Message;
      const answer = handle(msg, req);
      if ('status' in answer) return void res.writeHead(answer.status, answer.headers).end();
      if (msg.id === undefined) return void res.writeHead(202).end();
      res
        .writeHead(200, { 'content-type': 'application/json', ...answer.headers })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: answer.result }));
    });
  };
}

/** `jsonRpcHandler(handle)` listening on a free loopback port. */
export function startJsonRpcServer(handle: (msg: Message, req: IncomingMessage) => HttpAnswer): Promise<Server> {
  const server = createServer(jsonRpcHandler(handle));
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

/** The answer of a server named `server` with one tool `tool` whose every call answers `text`. */
export function oneToolResult(msg: Message, server: string, tool: string, text: string): Record<string, unknown> {
  if (msg.method === 'initialize')
    return {
      protocolVersion: msg.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: server, version: '1' },
    };
  if (msg.method === 'tools/list') return { tools: [{ name: tool, inputSchema: { type: 'object' } }] };
  if (msg.method === 'tools/call') return { content: [{ type: 'text', text }] };
  return {};
}
