#!/usr/bin/env node
// @ts-check
// Would parsing a large JSON-RPC message on a worker thread free the event loop? The parsed
// object has to come back, and its structured clone is read on the loop. This posts a 3.9 MB
// tools/call (a text argument of short lines) to a thread that parses it and sends the object
// back, and prints the longest gap between 1 ms ticks of the loop while the object arrives,
// beside a JSON.parse of the same text on the loop. Six rounds; loopback nothing, no network.
//
//   node load/tools/parse-thread-probe.mjs
import { Worker } from 'node:worker_threads';

const lines = Array.from({ length: 35000 }, (_, i) => `word${i} ${'x'.repeat(100)}`);
const text = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'echo__echo', arguments: { text: lines.join('\n') } },
});
const thread = new Worker(
  `const { parentPort } = require('node:worker_threads');
   parentPort.on('message', (m) => { const o = JSON.parse(m); setTimeout(() => parentPort.postMessage(o), 50); });`,
  { eval: true },
);
process.stdout.write(`message: ${(text.length / 1e6).toFixed(1)} M characters\n`);
for (let round = 1; round <= 6; round++) {
  const arrived = new Promise((resolve) => thread.once('message', resolve));
  thread.postMessage(text);
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await arrived;
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(tick);
  const from = performance.now();
  JSON.parse(text);
  const parse = performance.now() - from;
  process.stdout.write(
    `round ${round}: loop held ${longest.toFixed(1)} ms while the parsed object arrived; JSON.parse on the loop ${parse.toFixed(1)} ms\n`,
  );
}
await thread.terminate();
