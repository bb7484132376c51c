#!/usr/bin/env node
// @ts-check
// A loopback round-robin HTTP proxy: each incoming request goes to the next of the targets in
// turn, whatever it is (POST, GET stream, DELETE), so consecutive requests of one client land
// on different gateway replicas. Bodies and responses are streamed both ways (SSE included).
// Used by scripts/conformance.sh (CONFORMANCE_REPLICAS) to put the suite in front of replicas.
//
//   node scripts/rr-proxy.mjs --port 0 http://127.0.0.1:4001 http://127.0.0.1:4002
//
// Prints `rr-proxy: http://127.0.0.1:<port>` on stdout once listening; on SIGTERM/SIGINT
// prints how many requests went to each target (stderr) and exits.
import http from 'node:http';

const argv = process.argv.slice(2);
let port = 0;
/** @type {URL[]} */
const targets = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--port') port = Number(argv[++i]);
  else targets.push(new URL(argv[i] ?? ''));
}
if (targets.length === 0 || !Number.isInteger(port)) {
  process.stderr.write('usage: rr-proxy.mjs [--port N] <target-url>...\n');
  process.exit(2);
}
for (const t of targets) {
  if (t.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(t.hostname)) {
    process.stderr.write(`rr-proxy: loopback http targets only, not ${t.href}\n`);
    process.exit(2);
  }
}

const hits = targets.map(() => 0);
let next = 0;
// Hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  const i = next++ % targets.length;
  hits[i] = (hits[i] ?? 0) + 1;
  const target = /** @type {URL} */ (targets[i]);
  /** @type {http.OutgoingHttpHeaders} */
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
  headers.host = target.host;
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
    (up) => {
      /** @type {http.OutgoingHttpHeaders} */
      const out = {};
      for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
      res.writeHead(up.statusCode ?? 502, out);
      res.flushHeaders();
      up.pipe(res);
      up.on('error', () => res.destroy());
    },
  );
  upstream.on('error', (err) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`rr-proxy: ${target.host}: ${err.message}\n`);
    } else res.destroy();
  });
  // The client went away (e.g. it closed an SSE stream): end the upstream request too.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 5000;

server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  const p = typeof addr === 'object' && addr ? addr.port : port;
  process.stdout.write(`rr-proxy: http://127.0.0.1:${p}\n`);
});

const stop = () => {
  process.stderr.write(`rr-proxy: requests per target: ${targets.map((t, i) => `${t.host}=${hits[i]}`).join(' ')}\n`);
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
