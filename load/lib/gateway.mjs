// @ts-check
// The gateway under test, as a separate process: `node dist/main.js --config <generated yaml>`
// on a port the OS picks, fronting the example stdio upstreams.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { LOOPBACK, benchNodeArgs, descendants, start } from './processes.mjs';

export const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Where the gateway under test is built (its dist/main.js): this checkout, or for the `@before`
 * rows of BENCH_COMPARE_ROOT another checkout of an earlier commit, measured in the same run.
 */
let gatewayRoot = ROOT;

/** @param {string | undefined} root  undefined: this checkout again */
export function useGatewayRoot(root) {
  gatewayRoot = root ?? ROOT;
}

const JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';

/**
 * The gateway runs with the allocator the container image gives it (jemalloc, see the
 * Dockerfile) when this machine has it (Debian: libjemalloc2); BENCH_ALLOCATOR=glibc forces
 * glibc's. Only RSS after streams close differs much (glibc keeps fragmented pages).
 */
export const ALLOCATOR = process.env.BENCH_ALLOCATOR === 'glibc' || !existsSync(JEMALLOC) ? 'glibc' : 'jemalloc';
const ALLOCATOR_ENV =
  ALLOCATOR === 'jemalloc'
    ? { LD_PRELOAD: JEMALLOC, MALLOC_CONF: 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:1000' }
    : {};
export const ECHO_SERVER = join(ROOT, 'examples/echo/server.mjs');
export const SLOW_SERVER = join(ROOT, 'examples/slow/server.mjs');
export const TASKS_SERVER = join(ROOT, 'examples/tasks/server.mjs');

/**
 * The fast Streamable HTTP echo upstream (baselines/echo-http-fast.mjs) on a free loopback port.
 * @returns {Promise<{ proc: import('./processes.mjs').Managed, url: string }>}
 */
export async function startHttpEcho() {
  const { proc, match } = await start({
    name: 'echo-http-fast',
    command: process.execPath,
    args: [join(ROOT, 'load/baselines/echo-http-fast.mjs')],
    ready: /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  });
  return { proc, url: /** @type {RegExpExecArray} */ (match)[1] };
}

/**
 * @typedef {{ min: number, max: number, maxInFlight: number, queueSize?: number, queueTimeoutMs?: number }} Pool
 */

/**
 * The pool the call scenarios use unless told otherwise (see pool-sweep for the others): one
 * worker, the same shape as mcp-proxy's one shared child, and on 2 cores the load generator
 * needs the CPU another worker would take.
 */
export const DEFAULT_POOL = { min: 1, max: 1, maxInFlight: 64 };

/** @param {string} text  "2x64" → { min: 2, max: 2, maxInFlight: 64 } */
export function parsePool(text) {
  const m = /^(\d+)x(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`bad pool "${text}": expected <workers>x<maxInFlight>, e.g. 2x64`);
  return { min: Number(m[1]), max: Number(m[1]), maxInFlight: Number(m[2]) };
}

/** @param {Pool} p */
export function poolLabel(p) {
  return p.min === p.max ? `${p.max}x${p.maxInFlight}` : `${p.min}-${p.max}x${p.maxInFlight}`;
}

/**
 * An upstream of the gateway under test: a stdio example (`script`) or a remote MCP server
 * (`url`, Streamable HTTP).
 * @typedef {{ name: string, script?: string, args?: string[], url?: string, pool?: Pool, mode?: 'shared' | 'per-session', validateArguments?: boolean, timeoutMs?: number, tasks?: { tools?: string[], requiredTools?: string[] }, fairness?: { maxInFlightPerPrincipal: number, queue?: number } }} BenchUpstream
 */

/** @param {BenchUpstream} u */
function upstreamConfig(u) {
  const common = {
    name: u.name,
    mode: u.mode ?? 'shared',
    pool: { queueSize: 10000, queueTimeoutMs: 10000, ...(u.pool ?? DEFAULT_POOL) },
    ...(u.validateArguments === undefined ? {} : { validateArguments: u.validateArguments }),
    ...(u.tasks === undefined ? {} : { tasks: u.tasks }),
    ...(u.timeoutMs === undefined ? {} : { timeoutMs: u.timeoutMs }),
    ...(u.fairness === undefined ? {} : { fairness: u.fairness }),
  };
  if (u.url) return { ...common, transport: 'http', url: u.url };
  return { ...common, transport: 'stdio', command: process.execPath, args: [u.script, ...(u.args ?? [])] };
}

/**
 * @param {object} o
 * @param {BenchUpstream[]} o.upstreams
 * @param {Record<string, unknown>} [o.sessions]   the `sessions` config (default: memory)
 * @param {string} [o.logLevel]
 * @param {string | undefined} [o.cpuProfDir]   run node with --cpu-prof into this folder
 * @param {boolean} [o.gcOnSignal]   SIGUSR2 makes it run a full GC (see gc-on-signal.cjs)
 * @param {string[]} [o.nodeArgs]     more node options (e.g. --heapsnapshot-signal=SIGUSR1)
 * @param {Record<string, string>} [o.env]   more environment (e.g. OTEL_* for call-traced)
 * @param {Record<string, unknown>} [o.extra]   more top-level config keys (e.g. `tasks` for tasks-memory)
 * @param {number} [o.workers]   `cluster.workers` (scenarios/cluster.mjs); 1 when not given
 */
export async function startGateway({
  upstreams,
  sessions = { store: 'memory', ttlSeconds: 3600 },
  logLevel = 'warn',
  cpuProfDir = process.env.BENCH_CPU_PROF,
  gcOnSignal = false,
  nodeArgs: extraNodeArgs = [],
  env = {},
  extra = {},
  workers,
}) {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-bench-'));
  const config = {
    listen: { host: LOOPBACK, port: 0 },
    path: '/mcp',
    logLevel,
    sessions,
    shutdown: { drainMs: 1000 },
    ...(workers === undefined ? {} : { cluster: { workers } }),
    upstreams: upstreams.map(upstreamConfig),
    ...extra,
  };
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify(config));
  const nodeArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  if (gcOnSignal) nodeArgs.push('--expose-gc', '--require', join(ROOT, 'load/lib/gc-on-signal.cjs'));
  nodeArgs.push(...extraNodeArgs);
  nodeArgs.push(...benchNodeArgs());
  let started;
  const spawnedAt = Date.now();
  try {
    started = await start({
      name: 'mcp-gateway',
      command: process.execPath,
      args: [...nodeArgs, join(gatewayRoot, 'dist/main.js'), '--config', configFile],
      env: { MCPGW_PORT: '0', MCPGW_HOST: LOOPBACK, MCPGW_LOG_LEVEL: logLevel, ...ALLOCATOR_ENV, ...env },
      cwd: gatewayRoot,
      ready: /listening: MCP endpoint (\S+)/,
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { proc, match } = started;
  const url = /** @type {RegExpExecArray} */ (match)[1];
  const base = new URL(url).origin;
  // Ready means every pool has a ready worker.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await fetch(`${base}/readyz`).catch(() => undefined);
    if (res?.status === 200) break;
    if (Date.now() > deadline) {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`gateway not ready: ${res ? `${res.status} ${await res.text()}` : 'no answer'}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    base,
    pid: proc.pid,
    spawnedAt,
    cpuProfDir,
    config,
    configFile,
    /** the gateway process alone (with cluster.workers: the primary and its workers) */
    gatewayPids: () => [proc.pid, ...clusterWorkers(proc.pid)],
    /** its upstream workers (children; with cluster.workers, the workers' children) */
    upstreamPids: () => {
      const gateways = new Set(clusterWorkers(proc.pid));
      return descendants(proc.pid).filter((pid) => !gateways.has(pid));
    },
    output: proc.output,
    async stop() {
      await proc.stop(8000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The node:cluster workers of a gateway started with cluster.workers > 1 (children running
 * dist/main.js); none otherwise.
 * @param {number} pid
 */
function clusterWorkers(pid) {
  return descendants(pid).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('dist/main.js');
    } catch {
      return false;
    }
  });
}

/** @typedef {Awaited<ReturnType<typeof startGateway>>} RunningGateway */

/**
 * A number from the gateway's Prometheus /metrics (sum over label sets), or undefined.
 * @param {string} base
 * @param {string} name
 */
export async function metric(base, name) {
  return (await metrics(base, [name]))[name];
}

/**
 * Several numbers from one /metrics scrape (each summed over its label sets).
 * @param {string} base
 * @param {string[]} names
 * @returns {Promise<Record<string, number | undefined>>}
 */
export async function metrics(base, names) {
  /** @type {Record<string, number | undefined>} */
  const out = Object.fromEntries(names.map((n) => [n, undefined]));
  const res = await fetch(`${base}/metrics`).catch(() => undefined);
  if (!res || res.status !== 200) return out;
  const text = await res.text();
  for (const line of text.split('\n')) {
    for (const name of names) {
      if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) {
        const v = Number(line.slice(line.lastIndexOf(' ') + 1));
        if (Number.isFinite(v)) out[name] = (out[name] ?? 0) + v;
      }
    }
  }
  return out;
}
