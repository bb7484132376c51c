#!/usr/bin/env node
// @ts-check
// Instructions per request, counted by valgrind's callgrind: independent of what else the
// machine runs (unlike CPU µs/req, which a loaded machine inflates through contention). The
// target runs under `valgrind --tool=callgrind --instr-atstart=no` with V8 single-threaded;
// this process drives a fixed load (10 keep-alive connections, one call at a time each),
// turns instrumentation on for the measured calls only, and reads the total from the dump.
// User-space instructions only: the kernel's share of a syscall is not in it.
//
//   node load/tools/instructions.mjs <target> [--calls 2000] [--warmup 600] [--root <checkout>] [--log-level warn]
//   targets: bare-fastify, call-json, call-stateless, call-redis (cacheMs 0), call-http
// --root: another built checkout's dist/main.js (e.g. the commit before), the load unchanged.
// --log-level: the gateway's logLevel (warn by default, as the bench; info is the default configuration, with
// the access log, written to a pipe this process drains).
// --warmup: with --single-threaded TurboFan compiles on the main thread, inside the count; at
// 2000 about 40 % of call-json's counted instructions were Runtime_CompileOptimized. 8000 is
// close to steady state (load/results/2026-12-01-instructions-2.md has both).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { ECHO_SERVER, ROOT, startHttpEcho } from '../lib/gateway.mjs';
import { LOOPBACK, freePort, start, stopAll } from '../lib/processes.mjs';
import {
  INITIALIZED_BODY,
  POST_HEADERS,
  initializeBody,
  sessionHeaders,
  statelessCallHeaders,
  statelessToolsCallBody,
  toolsCallBody,
} from '../lib/mcp.mjs';

const args = process.argv.slice(2);
const opt = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : /** @type {string} */ (args[i + 1]);
};
const target = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 'call-json';
const calls = Number(opt('--calls', '2000'));
const warmup = Number(opt('--warmup', '600'));
const root = resolve(opt('--root', ROOT));
const logLevel = opt('--log-level', 'warn');
const CONNECTIONS = 10;

const dir = mkdtempSync(join(tmpdir(), 'mcpgw-cg-'));
const valgrind = ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'cg.%p')}`];
const node = [process.execPath, '--single-threaded'];

/** @param {Record<string, unknown>} config */
async function gateway(config) {
  const file = join(dir, 'gateway.json');
  writeFileSync(
    file,
    JSON.stringify({
      listen: { host: LOOPBACK, port: 0 },
      path: '/mcp',
      logLevel,
      shutdown: { drainMs: 500 },
      ...config,
    }),
  );
  return start({
    name: 'gateway (callgrind)',
    command: 'valgrind',
    args: [...valgrind, ...node, join(root, 'dist/main.js'), '--config', file],
    env: { MCPGW_PORT: '0', MCPGW_HOST: LOOPBACK },
    cwd: root,
    ready: /listening: MCP endpoint (\S+)/,
    timeoutMs: 180_000,
  });
}

const echo = {
  name: 'echo',
  transport: 'stdio',
  command: process.execPath,
  args: [ECHO_SERVER],
  pool: { min: 1, max: 1, maxInFlight: 64, queueSize: 10000, queueTimeoutMs: 60000 },
  timeoutMs: 120000,
};
let redis;
let started;
if (target === 'bare-fastify') {
  started = await start({
    name: 'bare (callgrind)',
    command: 'valgrind',
    args: [...valgrind, ...node, join(ROOT, 'load/baselines/bare-fastify-server.mjs')],
    ready: /listening (\S+)/,
    timeoutMs: 180_000,
  });
} else if (target === 'call-redis') {
  const port = await freePort();
  redis = await start({
    name: 'redis-server',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', LOOPBACK, '--save', '', '--appendonly', 'no'],
    ready: /Ready to accept connections/,
  });
  started = await gateway({
    sessions: { store: 'redis', redisUrl: `redis://${LOOPBACK}:${port}`, ttlSeconds: 3600, cacheMs: 0 },
    upstreams: [echo],
  });
} else if (target === 'call-http') {
  // Stopped with everything else by stopAll().
  const echoHttp = await startHttpEcho();
  const { pool: _p, command: _c, args: _a, transport: _t, ...rest } = echo;
  started = await gateway({
    upstreams: [
      {
        ...rest,
        transport: 'http',
        url: echoHttp.url,
        pool: { min: 1, max: 1, maxInFlight: 64, queueSize: 10000, queueTimeoutMs: 60000 },
      },
    ],
  });
} else {
  started = await gateway({ upstreams: [echo] });
}
const url = /** @type {RegExpExecArray} */ (started.match)[1];
const vgPid = started.proc.pid;
const agent = new Agent({ connections: CONNECTIONS, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });

/** @type {string[]} */
const sids = [];
if (target !== 'bare-fastify' && target !== 'call-stateless') {
  for (let i = 0; i < CONNECTIONS; i++) {
    const r = await request(url, { method: 'POST', dispatcher: agent, headers: POST_HEADERS, body: initializeBody() });
    await r.body.text();
    const sid = /** @type {string} */ (r.headers['mcp-session-id']);
    const n = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: sessionHeaders(sid),
      body: INITIALIZED_BODY,
    });
    await n.body.text();
    sids.push(sid);
  }
}
let nextId = 1;
/** @param {number} i */
async function one(i) {
  const id = nextId++;
  const stateless = target === 'call-stateless';
  const headers = stateless
    ? statelessCallHeaders('echo__echo')
    : sids.length
      ? sessionHeaders(/** @type {string} */ (sids[i % sids.length]))
      : POST_HEADERS;
  const body = stateless
    ? statelessToolsCallBody(id, 'echo__echo', { text: 'hello' })
    : toolsCallBody(id, 'echo__echo', { text: 'hello' });
  const r = await request(url, { method: 'POST', dispatcher: agent, headers, body });
  const text = await r.body.text();
  if (r.statusCode !== 200 || !text.includes('hello'))
    throw new Error(`bad reply: ${r.statusCode} ${text.slice(0, 300)}`);
}
/** @param {number} n */
async function load(n) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < n) await one(next++);
    }),
  );
}
try {
  await load(warmup);
  execFileSync('callgrind_control', ['-z', String(vgPid)], { stdio: 'ignore' });
  execFileSync('callgrind_control', ['-i', 'on', String(vgPid)], { stdio: 'ignore' });
  const t0 = Date.now();
  await load(calls);
  // Dumped while instrumentation is still on (turning it off first loses the counts).
  execFileSync('callgrind_control', ['-d', String(vgPid)], { stdio: 'ignore' });
  execFileSync('callgrind_control', ['-i', 'off', String(vgPid)], { stdio: 'ignore' });
  let total = 0;
  for (let tries = 0; tries < 50 && total === 0; tries++) {
    for (const f of readdirSync(dir).filter((f) => f.startsWith('cg.'))) {
      const m = /^summary: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
      if (m) total = Math.max(total, Number(m[1]));
    }
    if (total === 0) await new Promise((r) => setTimeout(r, 200));
  }
  process.stdout.write(
    `${target}${root === ROOT ? '' : ` (${root})`}${logLevel === 'warn' ? '' : ` at ${logLevel}`}: ${calls} calls in ${((Date.now() - t0) / 1000).toFixed(1)} s under callgrind; ${(total / calls / 1000).toFixed(1)} k instructions per call\n`,
  );
} finally {
  await agent.close();
  await stopAll(5000);
  if (process.env.KEEP_CG) process.stderr.write(`kept ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
