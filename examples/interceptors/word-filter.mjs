// @ts-check
// A small interceptor server (SEP-2624 draft: interceptors/list, interceptor/invoke) on the
// official SDK v1's low-level Server, over stdio or Streamable HTTP, for docs/guardrails.md and tests.
//
//   node examples/interceptors/word-filter.mjs [--http] [--port N] [--deny WORD,...] [--replace FROM=TO,...]
//                                             [--delay-ms N] [--crash] [--garbage] [--list-garbage] [--huge]
//
// Interceptors:
//   word-filter/deny     validation, request phase of tools/call and prompts/get: refuses a payload
//                        holding a --deny word (default: forbidden), case-insensitive.
//   word-filter/replace  mutation, both phases of tools/call, prompts/get and resources/read, and of
//                        an upstream's elicitation/create and sampling/createMessage: each
//                        --replace word (default: darn=d**n) becomes its replacement in every string
//                        of the payload except protocol fields (name, uri, type, mimeType, _meta).
// Misbehaviour for tests: --delay-ms waits before each answer to interceptor/invoke, --crash exits
// on the first one, --garbage answers it with something that is not an interceptor result,
// --list-garbage answers interceptors/list so, --huge answers each mutation with a 5 MB payload.
// With --http it listens on 127.0.0.1 only (port 0 = a free one) and prints one line to stdout:
//   listening on http://127.0.0.1:PORT/mcp

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const { values: opts } = parseArgs({
  options: {
    http: { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
    deny: { type: 'string', default: 'forbidden' },
    replace: { type: 'string', default: 'darn=d**n' },
    'delay-ms': { type: 'string', default: '0' },
    crash: { type: 'boolean', default: false },
    garbage: { type: 'boolean', default: false },
    'list-garbage': { type: 'boolean', default: false },
    huge: { type: 'boolean', default: false },
  },
});

const denied = opts.deny
  .split(',')
  .map((w) => w.trim().toLowerCase())
  .filter(Boolean);
const replacements = opts.replace
  .split(',')
  .map((pair) => pair.split('='))
  .filter((p) => p.length === 2 && p[0])
  .map(([from, to]) => ({ from: new RegExp(escape(from ?? ''), 'gi'), to: to ?? '' }));
const delayMs = Number(opts['delay-ms']);

const EVENTS = ['tools/call', 'prompts/get'];
const MUTATED = [...EVENTS, 'resources/read', 'elicitation/create', 'sampling/createMessage'];
const INTERCEPTORS = [
  { name: 'word-filter/deny', type: 'validation', hooks: [{ events: EVENTS, phase: 'request' }] },
  {
    name: 'word-filter/replace',
    type: 'mutation',
    hooks: [
      { events: MUTATED, phase: 'request' },
      { events: MUTATED, phase: 'response' },
    ],
  },
];
const PROTOCOL_KEYS = new Set(['name', 'uri', 'type', 'mimeType', '_meta']);

/** @param {string} s */
function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** @param {unknown} v @param {(s: string) => void} fn */
function eachString(v, fn) {
  if (typeof v === 'string') fn(v);
  else if (Array.isArray(v)) v.forEach((x) => eachString(x, fn));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) if (!PROTOCOL_KEYS.has(k)) eachString(x, fn);
}

/** @param {unknown} v @returns {unknown} */
function mapStrings(v) {
  if (typeof v === 'string') return replacements.reduce((s, r) => s.replace(r.from, r.to), v);
  if (Array.isArray(v)) return v.map(mapStrings);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, PROTOCOL_KEYS.has(k) ? x : mapStrings(x)]));
  return v;
}

/** @param {{ name: string, phase: string, payload?: unknown }} params */
function invoke(params) {
  const { name, phase, payload } = params;
  if (name === 'word-filter/deny') {
    /** @type {string[]} */
    const hits = [];
    eachString(payload, (s) => denied.forEach((w) => s.toLowerCase().includes(w) && hits.push(w)));
    return hits.length === 0
      ? { interceptor: name, type: 'validation', phase, valid: true }
      : {
          interceptor: name,
          type: 'validation',
          phase,
          valid: false,
          severity: 'error',
          messages: [{ message: 'a denied word', severity: 'error' }],
        };
  }
  if (name === 'word-filter/replace') {
    const out = mapStrings(payload);
    const modified = JSON.stringify(out) !== JSON.stringify(payload);
    return { interceptor: name, type: 'mutation', phase, modified, ...(modified ? { payload: out } : {}) };
  }
  throw new Error(`unknown interceptor ${name}`);
}

function newServer() {
  const server = new Server(
    { name: 'word-filter', version: '1.0.0' },
    { capabilities: { experimental: { 'io.modelcontextprotocol/interceptors': { supportedEvents: EVENTS } } } },
  );
  const list = z.object({ method: z.literal('interceptors/list'), params: z.optional(z.object({}).passthrough()) });
  const call = z.object({
    method: z.literal('interceptor/invoke'),
    params: z.object({ name: z.string(), event: z.string(), phase: z.string(), payload: z.unknown() }).passthrough(),
  });
  server.setRequestHandler(list, async () =>
    opts['list-garbage'] ? { interceptors: [{ name: 7, hooks: 'all' }] } : { interceptors: INTERCEPTORS },
  );
  server.setRequestHandler(call, async (request) => {
    if (opts.crash) process.exit(3);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (opts.garbage) return { type: 'verdict', says: 'maybe' };
    const p = request.params;
    if (opts.huge && p.name === 'word-filter/replace')
      return { type: 'mutation', phase: p.phase, modified: true, payload: { arguments: { text: 'x'.repeat(5e6) } } };
    return invoke(request.params);
  });
  return server;
}

if (!opts.http) {
  await newServer().connect(new StdioServerTransport());
} else {
  /** @type {Map<string, StreamableHTTPServerTransport>} */
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (typeof id === 'string' && !transport) {
      res.writeHead(404).end();
      return;
    }
    if (!transport) {
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, t),
      });
      t.onclose = () => t.sessionId && sessions.delete(t.sessionId);
      await newServer().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res);
  });
  http.listen(Number(opts.port), '127.0.0.1', () => {
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    process.stdout.write(`listening on http://127.0.0.1:${port}/mcp\n`);
  });
  const stop = () => http.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
