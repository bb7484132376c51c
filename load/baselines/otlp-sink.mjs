// @ts-check
// An OTLP/HTTP receiver for the call-traced scenario: takes POST /v1/traces (JSON or protobuf),
// counts what arrived and answers 200 at once, like a collector that keeps up. Loopback only.
//   node load/baselines/otlp-sink.mjs      prints "otlp sink listening on http://127.0.0.1:PORT"
import { createServer } from 'node:http';

let posts = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (/** @type {Buffer} */ c) => (bytes += c.length));
  req.on('end', () => {
    posts++;
    const json = (req.headers['content-type'] ?? '').startsWith('application/json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`otlp sink listening on http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => {
  process.stderr.write(`otlp sink: ${posts} posts, ${bytes} bytes\n`);
  server.close(() => process.exit(0));
});
