/**
 * A remote MCP server of our own that misbehaves on purpose, over real HTTP on loopback (an
 * in-process node:http server, so a test can flip its behaviour and count what reached it).
 * It speaks just enough Streamable HTTP: initialize (a session id per initialize), 202 for
 * notifications, 404 for unknown sessions, tools/list, ping, resources/read. Each tool is one
 * misbehaviour:
 *
 *   ok            answers at once (JSON)
 *   hang          never sends response headers
 *   hang-sse      sends SSE headers, then nothing
 *   garbage-json  200 application/json whose body is not JSON
 *   garbage-html  200 text/html
 *   garbage-sse   an SSE event whose data is not JSON
 *   wrong-id      a JSON-RPC response to another request id
 *   cut-sse       one progress event, then the connection is destroyed (no event ids)
 *   resumable     a priming event and a progress event with ids, then the stream ends; the
 *                 answer comes on a GET with Last-Event-ID (SEP-1699 polling)
 *   fail-503      HTTP 503 (as does resources/read of its resource for its first two tries)
 *   fail-500      HTTP 500
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>;

const TOOLS = [
  'ok',
  'hang',
  'hang-sse',
  'garbage-json',
  'garbage-html',
  'garbage-sse',
  'wrong-id',
  'cut-sse',
  'resumable',
  'fail-503',
  'fail-500',
];

export class MisbehavingUpstream {
  url = '';
  /** initialize requests received. */
  initializes = 0;
  /** Calls received per tool name (and per `resources/read` URI). */
  readonly hits = new Map<string, number>();
  /** Request ids named by notifications/cancelled, per session. */
  readonly cancelled: Array<string | number> = [];
  /** GETs that resumed a stream with Last-Event-ID. */
  resumes = 0;
  /** Sessions ended with DELETE. */
  deletes = 0;
  /** Every non-initialize request gets 404, as if sessions died as soon as they were made. */
  alwaysExpire = false;
  readonly #sessions = new Set<string>();
  /** Answers owed on resumption, by the last event id the client saw. */
  readonly #owed = new Map<string, Json>();
  #server: Server | undefined;
  #next = 0;

  /** `scheme` names its one resource, `<scheme>://x`, so two of these can sit in one catalog. */
  constructor(private readonly scheme = 'flaky') {}

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => void this.#handle(req, res));
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    return this;
  }

  /** Forgets every session: the next request of each gets 404. */
  expireSessions(): void {
    this.#sessions.clear();
  }

  hitsOf(name: string): number {
    return this.hits.get(name) ?? 0;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const sid = req.headers['mcp-session-id'];
      if (req.method === 'GET') return this.#get(req, res, sid);
      if (req.method === 'DELETE') {
        if (typeof sid === 'string' && this.#sessions.delete(sid)) this.deletes++;
        return void res.writeHead(200).end();
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      if (msg.method === 'initialize') {
        this.initializes++;
        const id = `s-${++this.#next}`;
        this.#sessions.add(id);
        return json(
          res,
          {
            jsonrpc: '2.0',
            id: msg.id,
            result: {
              protocolVersion: msg.params.protocolVersion,
              capabilities: { tools: {}, resources: {} },
              serverInfo: { name: 'misbehaving', version: '1' },
            },
          },
          { 'mcp-session-id': id },
        );
      }
      if (typeof sid !== 'string' || !this.#sessions.has(sid) || this.alwaysExpire)
        return void res.writeHead(404).end('session not found');
      if (msg.id === undefined || msg.method === undefined) {
        if (msg.method === 'notifications/cancelled') this.cancelled.push(msg.params.requestId);
        return void res.writeHead(202).end();
      }
      return this.#request(msg, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  }

  #request(msg: Json, res: ServerResponse): void {
    const reply = (result: Json) => ({ jsonrpc: '2.0', id: msg.id, result });
    switch (msg.method) {
      case 'ping':
        return json(res, reply({}));
      case 'tools/list':
        return json(res, reply({ tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' } })) }));
      case 'resources/list':
        return json(res, reply({ resources: [{ uri: `${this.scheme}://x`, name: 'flaky' }] }));
      case 'resources/templates/list':
        return json(res, reply({ resourceTemplates: [] }));
      case 'resources/read': {
        const n = this.#hit(`read:${msg.params.uri}`);
        if (n <= 2) return void res.writeHead(503, { 'retry-after': '0' }).end('try again');
        return json(res, reply({ contents: [{ uri: msg.params.uri, text: `read on try ${n}` }] }));
      }
      case 'tools/call':
        break;
      default:
        return json(res, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
    }
    const name = String(msg.params?.name);
    this.#hit(name);
    const token = msg.params?._meta?.progressToken;
    const progress = {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: token, progress: 1, total: 2 },
    };
    const sse = () => res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    switch (name) {
      case 'ok':
        return json(res, reply({ content: [{ type: 'text', text: 'ok' }] }));
      case 'hang':
        return; // no headers, ever
      case 'hang-sse':
        sse().flushHeaders();
        return;
      case 'garbage-json':
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('this is not json {');
      case 'garbage-html':
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<html><body>Welcome to nginx!</body></html>');
      case 'garbage-sse':
        return void sse().end('data: this is not json\n\n');
      case 'wrong-id':
        return json(res, { jsonrpc: '2.0', id: 987654, result: {} });
      case 'cut-sse':
        sse().write(`data: ${JSON.stringify(progress)}\n\n`);
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      case 'resumable': {
        const base = `ev-${++this.#next}`;
        this.#owed.set(`${base}-1`, reply({ content: [{ type: 'text', text: 'answer after resumption' }] }));
        sse().end(`id: ${base}-0\nretry: 10\ndata: \n\nid: ${base}-1\ndata: ${JSON.stringify(progress)}\n\n`);
        return;
      }
      case 'fail-503':
        return void res.writeHead(503).end('unavailable');
      default:
        return void res.writeHead(500).end('internal error');
    }
  }

  #get(req: IncomingMessage, res: ServerResponse, sid: unknown): void {
    if (typeof sid !== 'string' || !this.#sessions.has(sid)) return void res.writeHead(404).end();
    const last = req.headers['last-event-id'];
    const owed = typeof last === 'string' ? this.#owed.get(last) : undefined;
    if (!owed) return void res.writeHead(405).end();
    this.resumes++;
    this.#owed.delete(last as string);
    res
      .writeHead(200, { 'content-type': 'text/event-stream' })
      .end(`id: ${last}-answer\ndata: ${JSON.stringify(owed)}\n\n`);
  }

  #hit(key: string): number {
    const n = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, n);
    return n;
  }
}

function json(res: ServerResponse, body: Json, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
