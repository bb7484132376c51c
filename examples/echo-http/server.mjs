// @ts-check
// A Streamable HTTP MCP server (official SDK v1: McpServer + StreamableHTTPServerTransport on
// node:http, stateful: one session per client) used as a remote upstream in docs and tests.
//
//   node examples/echo-http/server.mjs [--port N] [--json-response] [--name NAME] [--record FILE] [--record-headers FILE]
//
// Listens on 127.0.0.1 only (port 0 = a free one) and prints one line to stdout:
//   listening on http://127.0.0.1:PORT/mcp
// Diagnostics go to stderr. Unknown session ids get 404, as the spec asks, so a client can
// tell "session gone" apart from a bad request. --record appends every JSON-RPC message the
// server receives to FILE, one line each, so a test can see what reached it.
//
// Tools:     echo {text}, add {a, b}, whoami {} (pid and session), sleep {ms, steps} (progress),
//            sample {prompt} (asks the client for sampling/createMessage), hang {},
//            toggle {} (adds or removes the tool `extra` in every session: tools/list_changed)
// Prompts:   greeting {name}
// Resources: <NAME>://readme (NAME defaults to echo-http; two servers of other names can share a catalog)

import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CreateMessageResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { sleep } from '../lib/abortable-sleep.mjs';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'json-response': { type: 'boolean', default: false },
    name: { type: 'string', default: 'echo-http' },
    record: { type: 'string' },
    'record-headers': { type: 'string' },
  },
});

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[echo-http ${process.pid}] ${msg}\n`);
}

/** Live sessions: transport and the server behind it. */
const sessions = new Map();
let extraOn = false;

/** @param {McpServer} server */
function addExtra(server) {
  return server.registerTool('extra', { description: 'Exists while toggled on.' }, async () => ({
    content: [{ type: 'text', text: 'extra' }],
  }));
}

/** @param {() => string | undefined} sessionId */
function buildServer(sessionId) {
  const server = new McpServer(
    { name: opts.name, version: '0.1.0' },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  server.registerTool(
    'echo',
    { description: 'Returns the given text unchanged.', inputSchema: { text: z.string() } },
    async ({ text }) => ({
      content: [{ type: 'text', text }],
    }),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }),
  );
  server.registerTool(
    'whoami',
    { description: 'The process id and the session id that handled the call.' },
    async () => ({
      content: [{ type: 'text', text: JSON.stringify({ pid: process.pid, session: sessionId() }) }],
    }),
  );
  server.registerTool(
    'sleep',
    {
      description: 'Sleeps `ms`, sending `steps` progress notifications.',
      inputSchema: { ms: z.number().min(0), steps: z.number().int().min(0).default(0) },
    },
    async ({ ms, steps }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await sleep(ms / steps, extra.signal);
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
      }
      if (steps === 0) await sleep(ms, extra.signal);
      return { content: [{ type: 'text', text: `slept ${ms}ms` }] };
    },
  );
  server.registerTool(
    'sample',
    { description: 'Asks the client to sample a reply to `prompt`.', inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      const result = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50 },
        },
        CreateMessageResultSchema,
      );
      const text = result.content.type === 'text' ? result.content.text : result.content.type;
      return { content: [{ type: 'text', text: `${result.model}: ${text}` }] };
    },
  );
  server.registerTool(
    'hang',
    { description: 'Never answers (until cancelled).' },
    (extra) =>
      new Promise((_resolve, reject) => extra.signal.addEventListener('abort', () => reject(new Error('cancelled')))),
  );
  server.registerTool('toggle', { description: 'Adds or removes the tool `extra` in every session.' }, async () => {
    extraOn = !extraOn;
    for (const s of sessions.values()) {
      if (extraOn) s.extra = addExtra(s.server);
      else s.extra?.remove();
    }
    return { content: [{ type: 'text', text: extraOn ? 'on' : 'off' }] };
  });
  server.registerPrompt(
    'greeting',
    { description: 'Greets someone.', argsSchema: { name: z.string() } },
    ({ name }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }],
    }),
  );
  server.registerResource('readme', `${opts.name}://readme`, { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${opts.name} readme` }],
  }));
  return server;
}

/** @param {import('node:http').IncomingMessage} req */
async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  if (opts.record && text) appendFileSync(opts.record, `${text.replace(/\n/g, ' ')}\n`);
  // The trace context headers each POST came with (tests check what an HTTP upstream is told).
  if (opts['record-headers'])
    appendFileSync(
      opts['record-headers'],
      `${JSON.stringify({ traceparent: req.headers.traceparent, tracestate: req.headers.tracestate, body: text ? JSON.parse(text) : undefined })}\n`,
    );
  return text ? JSON.parse(text) : undefined;
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} message
 */
function reject(res, status, message) {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

const http = createServer(async (req, res) => {
  try {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return reject(res, 404, 'Not found');
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      if (!session) return reject(res, 404, 'Session not found');
      return await session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || body?.method !== 'initialize')
      return reject(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    /** @type {StreamableHTTPServerTransport} */
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: opts['json-response'],
      onsessioninitialized: (id) => {
        sessions.set(id, entry);
        if (extraOn) entry.extra = addExtra(server);
      },
    });
    const server = buildServer(() => transport.sessionId);
    /** @type {{ transport: StreamableHTTPServerTransport, server: McpServer, extra?: { remove(): void } }} */
    const entry = { transport, server };
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (err) {
    log(`error: ${err instanceof Error ? err.message : String(err)}`);
    if (!res.headersSent) reject(res, 500, 'Internal server error');
  }
});

http.listen(Number(opts.port), '127.0.0.1', () => {
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  process.stdout.write(`listening on http://127.0.0.1:${port}/mcp\n`);
  log('ready');
});

process.on('SIGTERM', () => {
  http.closeAllConnections();
  http.close(() => process.exit(0));
});
