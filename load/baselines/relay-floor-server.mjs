// @ts-check
// The floor of any stdio-relaying gateway: bare-fastify-server.mjs plus one hop to a stdio MCP
// server and back, and nothing else (no sessions, no checks, no metrics, no timeouts). Each POST's
// tools/call gets a fresh id, goes to examples/echo/server.mjs as one line (the lines of one
// event-loop turn in one write, as the gateway's stdio wire does), and its answer, matched by id,
// is re-serialised with the client's id. Run by the relay-floor baseline; prints
// "listening <url>" once the child answered initialize and the server listens on 127.0.0.1.
import { spawn } from 'node:child_process';
import Fastify from 'fastify';

const echoServer = process.argv[2];
if (!echoServer) throw new Error('usage: relay-floor-server.mjs <stdio server script>');
const child = spawn(process.execPath, [echoServer], { stdio: ['pipe', 'pipe', 'inherit'] });

/** @type {Map<number, (message: { result?: unknown, error?: unknown }) => void>} */
const pending = new Map();
let nextId = 1;
/** @type {string[]} */
let queued = [];
const flush = () => {
  child.stdin.write(queued.join(''));
  queued = [];
};
/** @param {string} method @param {unknown} params */
function send(method, params) {
  const id = nextId++;
  if (queued.length === 0) setImmediate(flush);
  queued.push(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return /** @type {Promise<{ result?: unknown, error?: unknown }>} */ (new Promise((resolve) => pending.set(id, resolve)));
}
let buffered = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf('\n')) !== -1) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    const message = JSON.parse(line);
    const resolve = pending.get(message.id);
    if (resolve) {
      pending.delete(message.id);
      resolve(message);
    }
  }
});

await send('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'relay-floor', version: '0' } });
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

const app = Fastify({ logger: false });
app.post('/mcp', async (request, reply) => {
  const body = /** @type {{ id?: unknown, method: string, params: { name: string, arguments?: unknown } }} */ (request.body);
  // The load calls the gateway's namespaced name; the upstream knows the tool as `echo`.
  const answer = await send(body.method, { ...body.params, name: body.params.name.replace(/^echo__/, '') });
  reply.header('content-type', 'application/json');
  return JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, ...('error' in answer ? { error: answer.error } : { result: answer.result }) });
});

const stop = () => app.close().then(() => {
  child.kill();
  process.exit(0);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${address}/mcp\n`);
