// @ts-check
// Where the CPU a call costs goes as sessions pile up in the memory store (issue 34, item 4): the
// call-json load over 50 sessions while N sessions are open (SESSIONS_STEPS, default 10,100000),
// one gateway per step, all running at once, measured in SESSIONS_ROUNDS (3) interleaved rounds,
// with its GC time per call by kind from its own /metrics (nodejs_gc_duration_seconds) and its
// CPU per call by thread (the main thread apart from V8's helpers) beside its CPU per call.
//
//   npm run build && node load/tools/sessions-gc-probe.mjs
import { ECHO_SERVER, startGateway } from '../lib/gateway.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { measureEcho } from '../lib/workloads.mjs';
import { readFileSync, readdirSync } from 'node:fs';

/** CPU ticks of each thread of `pid` by its name: the main thread and V8's helpers (GC) apart. */
function threadTicks(/** @type {number} */ pid) {
  /** @type {Record<string, number>} */
  const byName = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    byName[name] = (byName[name] ?? 0) + Number(fields[11]) + Number(fields[12]);
  }
  return byName;
}

const STEPS = (process.env.SESSIONS_STEPS ?? '10,100000').split(',').map(Number);
const ctx = /** @type {import('../run.mjs').Context} */ ({ duration: 10, warmup: 2, connections: 50 });

/** @param {string} base */
async function gcSeconds(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  /** @type {Record<string, number>} */
  const byKind = {};
  for (const m of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([\d.e+-]+)$/gm))
    byKind[m[1]] = Number(m[2]);
  return byKind;
}

const ROUNDS = Number(process.env.SESSIONS_ROUNDS ?? 3);
/** With PROBE_CPU_PROF=<dir>, each gateway writes a CPU profile there; the probe prints each measured window. */
const cpuProfDir = process.env.PROBE_CPU_PROF;
/** @type {Array<{ step: number, gw: Awaited<ReturnType<typeof startGateway>>, sids: string[] }>} */
const gateways = [];
try {
  for (const step of STEPS) {
    const gw = await startGateway({
      upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: { min: 1, max: 1, maxInFlight: 64 } }],
      extra: { limits: { maxSessions: step + 1000 } },
      cpuProfDir,
    });
    gateways.push({ step, gw, sids: [] });
    gateways[gateways.length - 1].sids = (await openSessions(gw.url, step, 50)).slice(-50);
  }
  // All running at once, measured in interleaved rounds, as the sessions-scale scenario does.
  for (let round = 0; round < ROUNDS; round++)
    for (const { step, gw, sids } of gateways.map((_, i) => gateways[(i + round) % gateways.length])) {
      const pid = gw.gatewayPids()[0];
      const before = await gcSeconds(gw.base);
      const ticksBefore = threadTicks(pid);
      const started = (Date.now() - gw.spawnedAt) / 1000;
      const m = await measureEcho(ctx, gw.url, sids, { gateway: gw.gatewayPids });
      if (cpuProfDir)
        console.log(
          `pid ${pid}: --skip ${started.toFixed(0)} --until ${((Date.now() - gw.spawnedAt) / 1000).toFixed(0)}`,
        );
      const after = await gcSeconds(gw.base);
      const ticksAfter = threadTicks(pid);
      const calls = m.reqPerSec * ctx.duration;
      const cpuUs = ((m.procs.gateway.cpuPct / 100) * 1e6) / m.reqPerSec;
      const gc = Object.keys(after)
        .map((k) => `${k} ${(((after[k] - (before[k] ?? 0)) * 1e6) / calls).toFixed(1)}`)
        .join(', ');
      const threads = Object.keys(ticksAfter)
        .map((k) => `${k} ${(((ticksAfter[k] - (ticksBefore[k] ?? 0)) * 1e4) / calls).toFixed(1)}`)
        .join(', ');
      console.log(
        `round ${round + 1}, ${step} sessions: ${m.reqPerSec.toFixed(0)} req/s, gateway CPU ${cpuUs.toFixed(0)} µs/call; ` +
          `GC µs/call (incl. warm-up) ${gc}; CPU µs/call by thread (incl. warm-up) ${threads}`,
      );
    }
} finally {
  for (const { gw } of gateways) await gw.stop();
}
