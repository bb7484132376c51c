#!/usr/bin/env node
// @ts-check
// What one client's large calls cost another client's small ones: a gateway (memory sessions, the
// echo example on a pool of 2) serves a loop of 3.5 MB echo calls from a process of its own while
// this process sends small echo calls one at a time, 5 ms apart, for BENCH_PROBE_SECONDS (15), and
// prints the small calls' p50/p90/p99/max. The large client runs in its own process so that its
// own JSON work does not hold this one's event loop. Bounded in time; every process is stopped.
// BENCH_PROBE_CPU_PROF=<dir> writes the gateway's CPU profile there (load/tools/profile-summary.mjs
// reads it).
//
//   node load/tools/large-call-probe.mjs [<built checkout>]   (default: this one; build it first)
import { spawn } from 'node:child_process';
import { ECHO_SERVER, startGateway, useGatewayRoot } from '../lib/gateway.mjs';
import { POST_HEADERS, openSession, sessionHeaders, toolsCallBody } from '../lib/mcp.mjs';

const root = process.argv[2];
if (root) useGatewayRoot(root);
const seconds = Number(process.env.BENCH_PROBE_SECONDS ?? 15);
const gw = await startGateway({
  cpuProfDir: process.env.BENCH_PROBE_CPU_PROF,
  upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: { min: 2, max: 2, maxInFlight: 64 } }],
});
/** @param {string} sid @param {string} body */
const post = (sid, body) =>
  fetch(gw.url, { method: 'POST', headers: { ...POST_HEADERS, ...sessionHeaders(sid) }, body }).then((r) =>
    r.arrayBuffer(),
  );
try {
  const large = await openSession(gw.url);
  const small = await openSession(gw.url);
  const body = toolsCallBody(1, 'echo__echo', { text: 'PLACEHOLDER' });
  const headers = { ...POST_HEADERS, ...sessionHeaders(large) };
  const largeClient = `
    const body = Buffer.from(${JSON.stringify(body)}.replace('PLACEHOLDER', 'x'.repeat(3.5 * 1024 * 1024)));
    let n = 0;
    (async () => {
      for (;;) {
        const res = await fetch(${JSON.stringify(gw.url)}, { method: 'POST', headers: ${JSON.stringify(headers)}, body });
        await res.arrayBuffer();
        n++;
      }
    })();
    process.on('SIGTERM', () => { console.log(n); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', largeClient], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => setTimeout(r, 1000));
  /** @type {number[]} */
  const latencies = [];
  const started = Date.now();
  for (let i = 0; Date.now() - started < seconds * 1000; i++) {
    const sent = performance.now();
    await post(small, toolsCallBody(100000 + i, 'echo__echo', { text: 'hi' }));
    latencies.push(performance.now() - sent);
    await new Promise((r) => setTimeout(r, 5));
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  latencies.sort((a, b) => a - b);
  const q = (/** @type {number} */ x) =>
    /** @type {number} */ (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * x))]).toFixed(1);
  console.log(
    `${root ?? 'this checkout'}: ${out.trim()} large calls; ${latencies.length} small calls: ` +
      `p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(1)} ms`,
  );
} finally {
  await gw.stop();
}
