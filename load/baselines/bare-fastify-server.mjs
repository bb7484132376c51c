// @ts-check
// The ceiling: a bare Fastify 5 server answering a JSON-RPC POST with a canned tools/call result.
// It parses the body (Fastify's JSON parser) and echoes the request id; nothing else.
// Run by the bare-fastify baseline; prints "listening <url>" once it listens on 127.0.0.1.

import Fastify from 'fastify';

const app = Fastify({ logger: false });
const result = { content: [{ type: 'text', text: 'hello' }] };

app.post('/mcp', async (request, reply) => {
  const body = /** @type {{ id?: unknown }} */ (request.body);
  reply.header('content-type', 'application/json');
  return JSON.stringify({ jsonrpc: '2.0', id: body?.id ?? null, result });
});

const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${address}/mcp\n`);
