/**
 * A Streamable HTTP MCP server on loopback, in this process, that speaks 2026-07-28 (stateless:
 * server/discover, `_meta` on every request) and, with `dual`, 2025-06-18 too (initialize, a
 * session id). It records each request it gets with the era it arrived in, its headers and
 * `_meta`, so tests see how the gateway spoke to it. Tools: `whoami` (the caller as its headers
 * say), `refuse` (a JSON-RPC error with an HTTP 4xx status, as some 2026 servers answer), and
 * two that make a classic server-to-client request on their session, as the conformance suite's
 * reference server's test_elicitation and test_sampling do: `confirm` (elicitation/create) and
 * `sample` (sampling/createMessage). On a stateless 2026 request there is no session to send
 * one on: they answer -32601, as that server does. `listsSessionEra: false`: its discover names
 * only 2026-07-28 although it answers initialize (the reference server, FastMCP).
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
export const REFUSAL = {
  code: -32042,
  message: 'Refused by policy: not for this caller',
  data: { reason: 'policy', retry: false },
};

/** The answer a server-to-client request of `confirm` or `sample` waits for, by its id. */
type Waiting = Map<string, (message: { result?: Record<string, unknown>; error?: { message: string } }) => void>;

const ASKS: Record<string, { method: string; params: object; said: (r: Record<string, unknown>) => string }> = {
  confirm: {
    method: 'elicitation/create',
    params: { message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
    said: (r) => `${String(r.action)} ${JSON.stringify(r.content ?? {})}`,
  },
  sample: {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 },
    said: (r) => String((r.content as { text?: unknown } | undefined)?.text),
  },
};

export interface DualEraOptions {
  /** It answers initialize (2025-06-18) beside its 2026-07-28 side. */
  dual?: boolean;
  /** With `dual`: its discover names 2025-06-18 too (default); false: only 2026-07-28. */
  listsSessionEra?: boolean;
  /** How long its answer to initialize takes (a slow 2025 side). */
  initializeDelayMs?: number;
}

export async function startDualEraUpstream(options: DualEraOptions = {}): Promise<DualEraUpstream> {
  const seen: SeenRequest[] = [];
  const waiting: Waiting = new Map();
  let sessions = 0;
  let asked = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const msg = JSON.parse(body);
      // The client's answer to a request of `confirm` or `sample`.
      if (msg.method === undefined && waiting.has(String(msg.id))) {
        waiting.get(String(msg.id))!(msg);
        waiting.delete(String(msg.id));
        return void res.writeHead(202).end();
      }
      const meta = msg.params?._meta;
      const era =
        msg.method === 'initialize' || req.headers['mcp-session-id'] !== undefined || meta?.[PV] !== MODERN
          ? '2025'
          : '2026';
      seen.push({
        era,
        method: msg.method,
        ...(typeof msg.params?.name === 'string' ? { name: msg.params.name } : {}),
        headers: req.headers,
        meta,
      });
      if (msg.id === undefined) return void res.writeHead(202).end();
      const send = (status: number, payload: object, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { 'content-type': 'application/json', ...headers })
          .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...payload }));
      if (era === '2025' && !options.dual)
        return send(400, {
          error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [MODERN] } },
        });
      const done = (result: object) =>
        send(200, { result: era === '2026' ? { resultType: 'complete', ...result } : result });
      switch (msg.method) {
        case 'initialize': {
          const answer = () =>
            send(
              200,
              {
                result: {
                  protocolVersion: SESSION_ERA,
                  capabilities: { tools: {} },
                  serverInfo: { name: 'dual', version: '1' },
                },
              },
              { 'mcp-session-id': `s${++sessions}` },
            );
          if (options.initializeDelayMs) return void setTimeout(answer, options.initializeDelayMs);
          return answer();
        }
        case 'server/discover':
          return done({
            supportedVersions: options.dual && options.listsSessionEra !== false ? [SESSION_ERA, MODERN] : [MODERN],
            capabilities: { tools: {} },
            serverInfo: { name: 'dual', version: '1' },
          });
        case 'tools/list':
          return done({
            tools: [
              {
                name: 'whoami',
                inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
              },
              { name: 'refuse', inputSchema: { type: 'object' } },
              { name: 'confirm', inputSchema: { type: 'object' } },
              { name: 'sample', inputSchema: { type: 'object' } },
            ],
          });
        case 'tools/call': {
          if (msg.params.name === 'refuse') return send(403, { error: REFUSAL });
          const ask = ASKS[msg.params.name as string];
          if (ask && era === '2026')
            return send(200, {
              error: { code: -32601, message: `Method not found: ${ask.method} (no session to send it on)` },
            });
          if (ask) {
            // On the session: the request goes on the call's SSE reply, the answer comes as a POST.
            const id = `ask-${++asked}`;
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(
              `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, method: ask.method, params: ask.params })}\n\n`,
            );
            waiting.set(id, (answer) => {
              const text = answer.result
                ? `${ask.method}: ${ask.said(answer.result)}`
                : `${ask.method} failed: ${answer.error?.message}`;
              res.end(
                `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } })}\n\n`,
              );
            });
            return;
          }
          return done({
            content: [
              {
                type: 'text',
                text: `${era}: you are ${String(req.headers['x-user'] ?? 'nobody')} (${String(req.headers.authorization ?? 'no token')})`,
              },
            ],
          });
        }
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
