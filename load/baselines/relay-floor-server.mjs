// @ts-check
// The floor of any relaying gateway: bare-fastify-server.mjs plus one hop to an MCP server and
// back, and nothing else (no sessions of its own, no checks, no metrics, no timeouts). Each
// POST's tools/call gets a fresh id, goes to the upstream (`stdio <script>`: a child process, the
// lines of one event-loop turn in one write as the gateway's stdio wire does; `http <url>`: one
// Streamable HTTP session over undici's dispatch API, as the gateway's HTTP wire), and its
// answer is re-serialised with the client's id. With a Redis URL after them, each request first
// reads a session-sized record from Redis (ioredis, one GET, as the gateway's session store at
// cacheMs 0). Run by the relay-floor baseline; prints
// "listening <url>" once it listens on 127.0.0.1.
import { spawn } from 'node:child_process';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { Pool } from 'undici';

const [mode, target, redisUrl] = process.argv.slice(2);
if ((mode !== 'stdio' && mode !== 'http') || !target)
  throw new Error('usage: relay-floor-server.mjs stdio <server script> | http <MCP endpoint URL> [<redis URL>]');

const INITIALIZE = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'relay-floor', version: '0' },
};

/** @typedef {{ result?: unknown, error?: unknown }} Answer */
/** @type {(method: string, params: unknown) => Promise<Answer>} */
const send = mode === 'stdio' ? stdioHop(target) : await httpHop(new URL(target));

/**
 * One child process, newline-delimited JSON-RPC; the lines of one event-loop turn in one write.
 * @param {string} script
 */
function stdioHop(script) {
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  process.on('exit', () => child.kill());
  /** @type {Map<number, (message: Answer) => void>} */
  const pending = new Map();
  let nextId = 1;
  /** @type {string[]} */
  let queued = [];
  const flush = () => {
    child.stdin.write(queued.join(''));
    queued = [];
  };
  let buffered = '';
  /** @param {string} line */
  const onLine = (line) => {
    const message = JSON.parse(line);
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  };
  child.stdout.setEncoding('utf8');
  // Newlines are looked for in each new chunk only, as the gateway's stdio wire does: searching
  // the whole buffer each time flattens it per chunk, quadratic in a line's size (1 MB and 10 MB
  // results made this floor slower than the gateway).
  child.stdout.on('data', (/** @type {string} */ chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      onLine(buffered + chunk.slice(start, nl));
      buffered = '';
      start = nl + 1;
    }
    if (start < chunk.length) buffered += chunk.slice(start);
  });
  /** @type {(method: string, params: unknown) => Promise<Answer>} */
  const call = (method, params) => {
    const id = nextId++;
    if (queued.length === 0) setImmediate(flush);
    queued.push(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return new Promise((resolve) => pending.set(id, resolve));
  };
  void call('initialize', INITIALIZE).then(() => {
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  });
  return call;
}

/**
 * One Streamable HTTP session over an undici pool (keep-alive), through its dispatch API as the
 * gateway's HTTP wire does; JSON replies only.
 * @param {URL} url
 */
async function httpHop(url) {
  const pool = new Pool(url.origin, { headersTimeout: 0, bodyTimeout: 0 });
  process.on('exit', () => void pool.destroy());
  let nextId = 1;
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  /** @type {(method: string, params: unknown) => Promise<Answer & { sessionId?: string }>} */
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      /** @type {Buffer[]} */
      const chunks = [];
      /** @type {string | undefined} */
      let sessionId;
      pool.dispatch(
        {
          method: 'POST',
          path: url.pathname,
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
        },
        {
          onRequestStart() {},
          onResponseStart(_c, _status, h) {
            const sid = h['mcp-session-id'];
            if (typeof sid === 'string') sessionId = sid;
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve({ ...JSON.parse(Buffer.concat(chunks).toString('utf8')), sessionId });
          },
          onResponseError(_c, err) {
            reject(err);
          },
        },
      );
    });
  const { sessionId } = await call('initialize', INITIALIZE);
  if (sessionId) headers['mcp-session-id'] = sessionId;
  return call;
}

/** With a Redis URL: one GET of a session-sized record per request, parsed, as a gateway that keeps no session cache must. */
const readSession = redisUrl ? await sessionReader(redisUrl) : undefined;

/** @param {string} url */
async function sessionReader(url) {
  const redis = new Redis(url);
  process.on('exit', () => redis.disconnect());
  const key = 'relay-floor:session';
  await redis.set(
    key,
    JSON.stringify({
      id: key,
      protocolVersion: '2025-06-18',
      clientCapabilities: {},
      clientInfo: { name: 'bench', version: '1.0.0' },
      initialized: true,
      createdAt: Date.now(),
    }),
  );
  return async () => {
    const raw = await redis.get(key);
    if (raw === null) throw new Error('the session record is gone');
    return JSON.parse(raw);
  };
}

// Room for the payloads scenario's 10 MB calls (the gateway there runs with limits.bodyBytes 16 MiB).
const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
app.post('/mcp', async (request, reply) => {
  const body = /** @type {{ id?: unknown, method: string, params: { name: string, arguments?: unknown } }} */ (
    request.body
  );
  if (readSession) await readSession();
  // The load calls the gateway's namespaced name; the upstream knows the tool as `echo`.
  const answer = await send(body.method, { ...body.params, name: body.params.name.replace(/^echo__/, '') });
  reply.header('content-type', 'application/json');
  return JSON.stringify({
    jsonrpc: '2.0',
    id: body.id ?? null,
    ...('error' in answer ? { error: answer.error } : { result: answer.result }),
  });
});

const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${address}/mcp\n`);
