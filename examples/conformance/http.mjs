// @ts-check
// Serves the conformance fixture (server.mjs, a stdio MCP server) over Streamable HTTP, so the
// conformance suite can run through the gateway with the fixture as a *remote* upstream
// (`CONFORMANCE_UPSTREAM=http npm run test:conformance`):
//
//   node examples/conformance/http.mjs [--port N] [--dual]
//
// One child process per HTTP session (stateful, official SDK StreamableHTTPServerTransport on
// node:http), bridged message by message. Listens on 127.0.0.1 only and prints one line:
//   listening on http://127.0.0.1:PORT/mcp
//
// A bridge does not know which request a child's message belongs to; the SDK transport needs
// that to put it on the right reply stream. So: progress goes with the request that carried
// its token, and any other notification or request of the child goes with the one request in
// flight when there is exactly one (the suite calls one tool at a time), else on the GET stream.
//
// --dual: a dual-era server as the suite's HEAD reference server (examples/servers/typescript in
// modelcontextprotocol/conformance) and FastMCP are: beside its 2025 sessions it answers
// 2026-07-28 stateless requests (no Mcp-Session-Id, the revision in `_meta`), and its
// server/discover names only 2026-07-28. Those requests go to one more child through a client
// that declares no capabilities, so a tool's classic server-to-client request (sampling,
// elicitation) fails on them, as on that server: such requests work on a session only.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';

const FIXTURE = fileURLToPath(new URL('./server.mjs', import.meta.url));
const { values: opts } = parseArgs({
  options: { port: { type: 'string', default: '0' }, dual: { type: 'boolean', default: false } },
});
const MODERN = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
/** What a stateless request may ask (the rest is -32601, as on the reference server). */
const STATELESS_METHODS = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'tools/call',
  'prompts/get',
  'resources/read',
  'completion/complete',
]);

/** @type {Map<string, StreamableHTTPServerTransport>} */
const sessions = new Map();

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[conformance-http ${process.pid}] ${msg}\n`);
}

/** A new session: its own child, bridged to its own HTTP transport. */
async function openSession() {
  const child = new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'inherit' });
  /** @type {StreamableHTTPServerTransport} */
  const http = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => void sessions.set(id, http),
  });
  /** Requests of the client the child has not answered yet; progress token → request id. */
  const inFlight = new Set();
  const byToken = new Map();
  http.onmessage = (message) => {
    const m = /** @type {any} */ (message);
    if (m.method !== undefined && m.id !== undefined) {
      inFlight.add(m.id);
      const token = m.params?._meta?.progressToken;
      if (token !== undefined) byToken.set(token, m.id);
    }
    child.send(message).catch((err) => log(`to child: ${err}`));
  };
  child.onmessage = (message) => {
    const m = /** @type {any} */ (message);
    if (m.method === undefined) {
      // A response: it finds its own stream by id.
      inFlight.delete(m.id);
      for (const [token, id] of byToken) if (id === m.id) byToken.delete(token);
      void http.send(message).catch((err) => log(`to client: ${err}`));
      return;
    }
    const related =
      m.method === 'notifications/progress'
        ? byToken.get(m.params?.progressToken)
        : inFlight.size === 1
          ? [...inFlight][0]
          : undefined;
    void http
      .send(message, related === undefined ? undefined : { relatedRequestId: related })
      .catch((err) => log(`to client: ${err}`));
  };
  http.onclose = () => {
    if (http.sessionId) sessions.delete(http.sessionId);
    void child.close();
  };
  child.onclose = () => void http.close();
  await child.start();
  await http.start();
  return http;
}

/** @param {import('node:http').IncomingMessage} req */
async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** @type {Promise<Client> | undefined} */
let statelessChild;

/** The child that serves stateless requests, and its client, which declares no capabilities. */
function stateless() {
  statelessChild ??= (async () => {
    const client = new Client({ name: 'stateless-dispatch', version: '1' }, { capabilities: {} });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'inherit' }));
    return client;
  })();
  return statelessChild;
}

/** A 2026-07-28 request (--dual): answered from the stateless child, JSON, `resultType` on every result. */
async function serveStateless(/** @type {import('node:http').ServerResponse} */ res, /** @type {any} */ body) {
  const reply = (/** @type {number} */ status, /** @type {object} */ payload) =>
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, ...payload }));
  if (body.params?._meta?.[PV] !== MODERN)
    return reply(400, {
      error: {
        code: -32022,
        message: 'Unsupported protocol version',
        data: { supported: [MODERN], requested: String(body.params?._meta?.[PV]) },
      },
    });
  if (body.id === undefined) return void res.writeHead(202).end();
  const client = await stateless();
  if (body.method === 'server/discover') {
    // No listChanged: this side has no subscriptions/listen stream.
    const capabilities = Object.fromEntries(
      Object.entries(client.getServerCapabilities() ?? {}).map(([k, v]) => [
        k,
        v && typeof v === 'object' ? { ...v, listChanged: undefined } : v,
      ]),
    );
    return reply(200, {
      result: {
        resultType: 'complete',
        supportedVersions: [MODERN],
        capabilities,
        serverInfo: client.getServerVersion(),
        ttlMs: 60000,
        cacheScope: 'public',
      },
    });
  }
  if (!STATELESS_METHODS.has(body.method)) return reply(404, { error: { code: -32601, message: 'Method not found' } });
  try {
    const result = await client.request({ method: body.method, params: body.params }, ResultSchema);
    return reply(200, { result: { resultType: 'complete', ...result } });
  } catch (err) {
    const e = /** @type {any} */ (err);
    return reply(200, {
      error: {
        code: typeof e.code === 'number' ? e.code : -32603,
        message: e.message ?? String(err),
        ...(e.data !== undefined ? { data: e.data } : {}),
      },
    });
  }
}

const server = createServer(async (req, res) => {
  try {
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (opts.dual && typeof sid !== 'string' && body?.params?._meta?.[PV] !== undefined)
      return void (await serveStateless(res, body));
    let http = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (typeof sid === 'string' && !http)
      return void res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
    if (!http) {
      if (req.method !== 'POST' || body?.method !== 'initialize')
        return void res.writeHead(400).end('Mcp-Session-Id header is required');
      http = await openSession();
    }
    await http.handleRequest(req, res, body);
  } catch (err) {
    log(`error: ${err instanceof Error ? err.message : String(err)}`);
    if (!res.headersSent) res.writeHead(500).end();
  }
});

server.listen(Number(opts.port), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : opts.port}/mcp\n`,
  );
});

const shutdown = () => {
  for (const http of sessions.values()) void http.close();
  void statelessChild?.then((c) => c.close()).catch(() => undefined);
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
