// @ts-check
// Benchmark entry point: `npm run bench` runs every scenario and baseline, `npm run bench --
// <name> [<name>…]` only those. Each one starts its own processes on 127.0.0.1 and stops them;
// whatever is still running is stopped on completion, on an error and on Ctrl-C.
//
// Environment: BENCH_DURATION (s per measurement, 10), BENCH_WARMUP (s, 2), BENCH_CONNECTIONS
// (50), BENCH_SESSIONS (sessions the call loads rotate through, 50), BENCH_POOLS (pool-sweep),
// BENCH_PEERS (comma list), BENCH_CPU_PROF (folder: run the gateway with --cpu-prof into it),
// BENCH_ROUNDS (3: every throughput scenario is measured this many times, the rounds interleaved,
// and each row reports its median round; on a shared machine one measurement can be off by 30 %),
// BENCH_IDLE_* (see scenarios/idle-sessions.mjs), BENCH_TASKS_* (see scenarios/tasks-memory.mjs).

import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ROOT, DEFAULT_POOL, poolLabel } from './lib/gateway.mjs';
import { abortCurrent } from './lib/load.mjs';
import { killAllNow, stillRunning, stopAll } from './lib/processes.mjs';
import { addPairedRatios, addRatios, machine, medianOf, textTable, unusedName, writeReport } from './lib/report.mjs';
import * as bareFastify from './baselines/bare-fastify.mjs';
import * as relayFloor from './baselines/relay-floor.mjs';
import * as peers from './baselines/peers.mjs';
import * as upstreamDirect from './baselines/upstream-direct.mjs';
import * as addedLatency from './scenarios/added-latency.mjs';
import * as callAdmitted from './scenarios/call-admitted.mjs';
import * as cacheScenario from './scenarios/cache.mjs';
import * as callHttp from './scenarios/call-http.mjs';
import * as callJson from './scenarios/call-json.mjs';
import * as callJsonUnchecked from './scenarios/call-json-unchecked.mjs';
import * as callPerSession from './scenarios/call-per-session.mjs';
import * as callRedis from './scenarios/call-redis.mjs';
import * as callStateless from './scenarios/call-stateless.mjs';
import * as callTraced from './scenarios/call-traced.mjs';
import * as callSse from './scenarios/call-sse-progress.mjs';
import * as callWebSocket from './scenarios/call-websocket.mjs';
import * as clusterScenario from './scenarios/cluster.mjs';
import * as callLegacySse from './scenarios/call-legacy-sse.mjs';
import * as hostileMix from './scenarios/hostile-mix.mjs';
import * as fairness from './scenarios/fairness.mjs';
import * as idleSessions from './scenarios/idle-sessions.mjs';
import * as connectionsScenario from './scenarios/connections.mjs';
import * as manyUpstreams from './scenarios/many-upstreams.mjs';
import * as sessionsScale from './scenarios/sessions-scale.mjs';
import * as payloads from './scenarios/payloads.mjs';
import * as poolSweep from './scenarios/pool-sweep.mjs';
import * as sessionChurn from './scenarios/session-churn.mjs';
import * as tasksMemory from './scenarios/tasks-memory.mjs';
import * as toolSearch from './scenarios/tool-search.mjs';
import { withBeforeTwins } from './scenarios/before.mjs';

/**
 * @typedef {object} Context
 * @property {number} duration      seconds per measurement
 * @property {number} warmup        seconds of warm-up before each measurement
 * @property {number} connections
 * @property {number} sessions      sessions a call load rotates through
 * @property {(msg: string) => void} log
 */

/** In run order: baselines first, so the ratios have something to compare with. */
const ALL = withBeforeTwins([
  bareFastify,
  relayFloor,
  upstreamDirect,
  callJsonUnchecked,
  callJson,
  callStateless,
  callRedis,
  callHttp,
  callTraced,
  callAdmitted,
  addedLatency,
  payloads,
  manyUpstreams,
  connectionsScenario,
  sessionsScale,
  cacheScenario,
  toolSearch,
  callPerSession,
  poolSweep,
  callSse,
  callWebSocket,
  callLegacySse,
  clusterScenario,
  sessionChurn,
  hostileMix,
  fairness,
  peers,
  idleSessions,
  tasksMemory,
]);

/**
 * Names that stand for several scenarios. `scale`: issue 34's tables in one results file, each
 * gateway row beside the floor of its hop (bare Fastify, the relay floors, the peers), warn and
 * info (call-traced's logLevel-info row is the default configuration's access log).
 */
const GROUPS = {
  scale: [
    'bare-fastify',
    'relay-floor',
    'call-json',
    'call-stateless',
    'call-redis',
    'call-http',
    'call-traced',
    'added-latency',
    'payloads',
    'many-upstreams',
    'connections',
    'sessions-scale',
    'idle-sessions',
    'peers',
  ],
};

/** @param {string[]} args scenario and group names @returns {string[]} scenario names */
function expandGroups(args) {
  return args.flatMap((a) => (Object.hasOwn(GROUPS, a) ? GROUPS[/** @type {keyof typeof GROUPS} */ (a)] : [a]));
}

/** @param {string} name @param {number} fallback */
function envNumber(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`bench: ${name}=${raw} is not a positive number\n`);
    process.exit(2);
  }
  return n;
}

function usage() {
  return [
    'Usage: npm run bench [-- <scenario>…]',
    '       node load/run.mjs --render load/results/<name>.json   (re-render a report from its JSON)',
    '',
    ...ALL.map((s) => `  ${s.name.padEnd(18)} ${s.kind.padEnd(9)} ${s.description}`),
    ...Object.entries(GROUPS).map(([g, names]) => `  ${g.padEnd(18)} ${'group'.padEnd(9)} ${names.join(' ')}`),
    '',
    'Env: BENCH_DURATION=10 BENCH_WARMUP=2 BENCH_CONNECTIONS=50 BENCH_SESSIONS=50 BENCH_ROUNDS=3 BENCH_POOLS=1x64,2x64,3x64,2x16',
    '     BENCH_PEERS=supergateway,mcp-proxy BENCH_CPU_PROF=<dir> BENCH_IDLE_SESSIONS=10000 BENCH_IDLE_STREAMS=10000',
  ].join('\n');
}

const log = (/** @type {string} */ msg) => process.stderr.write(`bench: ${msg}\n`);

// --- stopping everything we started, whatever happens --------------------------------------
let interrupted = false;
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    log(`${signal}: stopping the load and every process started (again to kill at once)`);
    abortCurrent();
    stopAll(2000).finally(() => process.exit(130));
  });
}
process.on('uncaughtException', (err) => {
  log(`uncaught: ${err.stack ?? err.message}`);
  stopAll(2000).finally(() => process.exit(1));
});
process.on('exit', () => killAllNow());

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('-h') || args.includes('--help') || args.includes('--list')) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (args[0] === '--render') {
    // Re-renders a report from its JSON (after a change to the report's format), measuring nothing.
    const file = args[1];
    if (!file) throw new Error('usage: node load/run.mjs --render load/results/<name>.json');
    const { rows, failures = [], ...meta } = JSON.parse(readFileSync(file, 'utf8'));
    addRatios(rows);
    addPairedRatios(rows);
    const out = writeReport(dirname(resolve(file)), basename(file, '.json'), { rows, meta, failures });
    process.stdout.write(`${textTable(rows)}\n\nreport: ${out.md}\n        ${out.json}\n`);
    return 0;
  }
  const names = expandGroups(args);
  const unknown = names.filter((a) => !ALL.some((s) => s.name === a));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown scenario ${unknown.join(', ')}\n\n${usage()}\n`);
    return 2;
  }
  // A `@before` twin comes with the scenario it repeats.
  const selected =
    names.length === 0
      ? ALL
      : ALL.filter((s) => names.includes(s.name) || names.includes(s.name.replace(/@before$/, '')));

  /** @type {Context} */
  const ctx = {
    duration: envNumber('BENCH_DURATION', 10),
    warmup: process.env.BENCH_WARMUP === '0' ? 0 : envNumber('BENCH_WARMUP', 2),
    connections: envNumber('BENCH_CONNECTIONS', 50),
    sessions: envNumber('BENCH_SESSIONS', 50),
    log,
  };
  const rounds = Math.round(envNumber('BENCH_ROUNDS', 3));

  const started = new Date();
  const envPart = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  const command = [...envPart, 'npm run bench', ...(args.length > 0 ? ['--', ...args] : [])].join(' ');
  const meta = {
    date: started.toISOString().slice(0, 10),
    startedAt: started.toISOString(),
    command,
    machine: machine(),
    settings: {
      duration: ctx.duration,
      warmup: ctx.warmup,
      connections: ctx.connections,
      sessions: ctx.sessions,
      pool: poolLabel(DEFAULT_POOL),
      rounds,
    },
    cpuProfile: process.env.BENCH_CPU_PROF,
    tookSeconds: 0,
  };
  log(
    `${selected.map((s) => s.name).join(', ')}: ${ctx.duration} s per measurement, ${ctx.warmup} s warm-up, c=${ctx.connections}, ${rounds} round(s)`,
  );

  /** @type {Record<string, any>[]} */
  const rows = [];
  /** @type {Array<{ scenario: string, error: string }>} */
  const failures = [];
  // Round after round of the whole selection, so that a slow spell of the machine lands on
  // every scenario alike rather than on one; memory and sweep scenarios run in the first only.
  const plan = [];
  for (let round = 1; round <= rounds; round++)
    for (const s of selected) if (round === 1 || !('once' in s && s.once)) plan.push({ s, round });
  for (const { s, round } of plan) {
    if (interrupted) break;
    log(`— ${s.name}${rounds > 1 ? ` (round ${round} of ${rounds})` : ''}: ${s.description}`);
    const t0 = Date.now();
    try {
      const out = /** @type {Record<string, any>[]} */ (await s.run(ctx));
      for (const r of out) r.round = round;
      rows.push(...out);
      for (const r of out) {
        if (r.skipped) log(`  ${r.target}: skipped`);
        else if (r.tasks)
          log(
            `  ${r.tasks.accepted}/${r.tasks.requested} tasks accepted in ${r.tasks.createTookMs} ms, ${Math.round(r.tasks.perTaskBytes)} B/task gateway RSS, ` +
              `sampled status ${JSON.stringify(r.tasks.sampleStatus)}, ${r.tasks.cancelAcked} cancels acked`,
          );
        else if (r.idle)
          log(
            `  ${Math.round(r.idle.perSessionBytes)} B/session, ${Math.round(r.idle.perStreamBytes)} B/stream, RSS ${r.idle.returnPct.toFixed(1)} % vs baseline after close`,
          );
        else
          log(
            `  ${r.target} ${r.variant ?? ''}: ${Math.round(r.reqPerSec)} req/s, p99 ${r.latencyMs.p99} ms, bad ${r.bad}` +
              (r.sessionsPerSec !== undefined ? `, ${Math.round(r.sessionsPerSec)} sessions/s` : ''),
          );
      }
    } catch (err) {
      const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`  ${s.name} failed: ${msg}`);
      failures.push({ scenario: s.name, error: err instanceof Error ? err.message : String(err) });
    } finally {
      await stopAll(); // anything a failed scenario left behind
    }
    log(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  meta.tookSeconds = Math.round((Date.now() - started.getTime()) / 1000);

  // Each round's ratios first, among the rows of that round: a spell of a slower machine between
  // rounds then cancels out of the paired ratios (addPairedRatios) instead of skewing them.
  for (let round = 1; round <= rounds; round++) addRatios(rows.filter((r) => r.round === round));
  rows.splice(0, rows.length, ...medianRows(rows));
  addRatios(rows);
  addPairedRatios(rows);
  // Named by a group when one was asked for (`scale`), else by every scenario run.
  const named = args.some((a) => Object.hasOwn(GROUPS, a)) ? args : selected.map((s) => s.name);
  const partial = args.length > 0 ? `-${named.join('+')}` : '';
  const profiled = process.env.BENCH_CPU_PROF ? '-profiled' : '';
  const dir = join(ROOT, 'load/results');
  const { md, json } = writeReport(dir, unusedName(dir, `${meta.date}${partial}${profiled}`), { rows, meta, failures });
  process.stdout.write(`\n${textTable(rows)}\n\n`);
  process.stdout.write(
    `err/non2xx/bad = connection errors+timeouts / non-2xx / replies failing the check. ×bare, ×peer: req/s ratios.\n`,
  );
  process.stdout.write(`report: ${md}\n        ${json}\n`);

  await stopAll();
  const left = stillRunning();
  if (left.length > 0) log(`still running after stop: ${left.join(', ')}`);
  if (interrupted) return 130;
  return failures.length > 0 ? 1 : 0;
}

/**
 * One row per scenario and variant: the round with the median req/s, every round's req/s kept
 * beside it (`rounds`), and every round's ratios (`roundRatios`). Rows without req/s (idle memory, skipped peers) pass through.
 * @param {Record<string, any>[]} rows
 */
function medianRows(rows) {
  /** @type {Map<string, Record<string, any>[]>} */
  const groups = new Map();
  for (const r of rows) {
    const key = `${r.scenario}\u0000${r.target}\u0000${r.variant ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((group) => {
    const measured = group.filter((r) => typeof r.reqPerSec === 'number' && !r.skipped);
    if (measured.length === 0) return group[0];
    const median = medianOf(measured, (r) => r.reqPerSec);
    return { ...median, rounds: measured.map((r) => r.reqPerSec), roundRatios: measured.map((r) => r.ratios) };
  });
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    await stopAll();
    process.exit(1);
  },
);
