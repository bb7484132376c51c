/**
 * A Streamable HTTP MCP server with sessions that takes only users' tokens issued by the test
 * authorization server (the gateway's own token, subject "gateway", is refused with 401), for
 * everything: initialize, tools/list (one tool, `whoami`) and tools/call (`you are <user> in
 * <session>`). For the tests of upstreams that list only per user.
 */
import { createServer, type Server } from 'node:http';
import type { AuthorizationServer } from './authorization-server.js';

export interface PerUserUpstreamEvents {
  /** A request it accepted: its method, the user its token acts for, its session. */
  accepted?: (request: { method: string; user: string; session: string | undefined }) => void;
  /** A request refused because it carried the gateway's own token. */
  refusedGateway?: () => void;
}

export function startPerUserUpstream(as: AuthorizationServer, events: PerUserUpstreamEvents = {}): Promise<Server> {
  let sessions = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const user = as.live.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (user === undefined || user === 'gateway') {
        if (user === 'gateway') events.refusedGateway?.();
        return void res.writeHead(401).end();
      }
      const msg = JSON.parse(body);
      const session = req.headers['mcp-session-id'] as string | undefined;
      events.accepted?.({ method: msg.method, user, session });
      if (msg.id === undefined) return void res.writeHead(202).end();
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (msg.method === 'initialize') headers['mcp-session-id'] = `s${++sessions}-${user}`;
      const result =
        msg.method === 'initialize'
          ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'private', version: '1' } }
          : msg.method === 'tools/list'
            ? { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }
            : msg.method === 'tools/call'
              ? { content: [{ type: 'text', text: `you are ${user} in ${session}` }] }
              : {};
      res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}
