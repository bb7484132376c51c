// @ts-check
// upstreams[].fairness: principal A keeps BENCH_FAIRNESS_FLOOD (50) calls of slow__sleep in
// flight (one per session, every one under A's API key) against one upstream worker with room for
// 8; principal B's calls of the same tool (c=BENCH_FAIRNESS_B, 4 sessions) are measured three
// times: alone, beside A's flood with `fairness: { maxInFlightPerPrincipal: 4 }`, and beside it
// without fairness. Without it the pool's queue takes turns between sessions, so B's call waits
// behind one turn of each of A's 50 sessions; with it A holds at most 4 places and B's calls find
// one free. The report gives B's p50/p99 as ratios to alone (aim: fairness on within 2×).
// Two gateways (fairness on, off), started one after the other; runs once.
import { createHash } from 'node:crypto';
import { SLOW_SERVER, startGateway } from '../lib/gateway.mjs';
import { measure } from '../lib/load.mjs';
import { openSessions, sessionHeaders, toolsCallBody } from '../lib/mcp.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'fairness';
export const kind = 'gateway';
export const description =
  "B's slow calls alone, then beside A's 50 in flight with fairness on (4 per principal) and off: B's p99 vs alone";
/** Three measurements of one story: measured once, in the first round. */
export const once = true;

const SLEEP_MS = Number(process.env.BENCH_FAIRNESS_SLEEP_MS ?? 100);
const POOL = { min: 1, max: 1, maxInFlight: 8 };
const FAIRNESS = { maxInFlightPerPrincipal: 4, queue: 64 };
const KEYS = { a: 'bench-principal-a-key-0123456789', b: 'bench-principal-b-key-0123456789' };
const AUTH = {
  mode: 'api-key',
  apiKeys: Object.entries(KEYS).map(([n, key]) => ({
    name: n,
    sha256: createHash('sha256').update(key).digest('hex'),
  })),
};
const bearer = (/** @type {string} */ key) => ({ authorization: `Bearer ${key}` });

/**
 * A's flood: `n` loops, each on its own session, one slow call after another until stopped.
 * @param {string} url @param {number} n
 */
async function startFlood(url, n) {
  const sids = await openSessions(url, n, 25, bearer(KEYS.a));
  const tally = { ok: 0, refused: 0, failed: 0 };
  let stopping = false;
  let id = 1_000_000;
  const loop = async (/** @type {string} */ sid) => {
    while (!stopping) {
      const body = toolsCallBody(id++, 'slow__sleep', { ms: SLEEP_MS, steps: 0 });
      try {
        const res = await fetch(url, { method: 'POST', headers: { ...sessionHeaders(sid), ...bearer(KEYS.a) }, body });
        const text = await res.text();
        if (text.includes('"result"')) tally.ok++;
        else if (text.includes('FAIRNESS_QUEUE_FULL')) tally.refused++;
        else tally.failed++;
      } catch {
        tally.failed++;
      }
    }
  };
  const loops = sids.map(loop);
  return {
    tally,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      return tally;
    },
  };
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const flood = Number(process.env.BENCH_FAIRNESS_FLOOD ?? 50);
  const bConnections = Number(process.env.BENCH_FAIRNESS_B ?? 4);
  /** @param {boolean} fair */
  const gateway = (fair) =>
    startGateway({
      upstreams: [{ name: 'slow', script: SLOW_SERVER, pool: POOL, ...(fair ? { fairness: FAIRNESS } : {}) }],
      extra: { auth: AUTH },
    });
  /** @param {import('../lib/gateway.mjs').RunningGateway} gw @param {string[]} sids @param {boolean} quiet */
  const measureB = (gw, sids, quiet) =>
    measure({
      url: gw.url,
      connections: bConnections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      quiet,
      makeLoad: () =>
        toolCallLoad({
          path: new URL(gw.url).pathname,
          sids,
          tool: 'slow__sleep',
          args: { ms: SLEEP_MS, steps: 0 },
          expectText: `slept ${SLEEP_MS}ms`,
          headers: bearer(KEYS.b),
        }),
      meters: { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
    });
  /** @param {boolean} fair */
  const beside = async (fair) => {
    const gw = await gateway(fair);
    try {
      const sids = await openSessions(gw.url, bConnections, 25, bearer(KEYS.b));
      const alone = fair ? await measureB(gw, sids, true) : undefined;
      const a = await startFlood(gw.url, flood);
      let m;
      try {
        m = await measureB(gw, sids, false);
      } finally {
        m = { .../** @type {import('../lib/load.mjs').Measurement} */ (m), floodA: await a.stop() };
      }
      return { alone, flooded: m };
    } finally {
      await gw.stop();
    }
  };
  const on = await beside(true);
  const off = await beside(false);
  const alone = /** @type {import('../lib/load.mjs').Measurement} */ (on.alone);
  /** @param {import('../lib/load.mjs').Measurement} m */
  const ratios = (m) => ({
    p50: m.latencyMs.p50 / Math.max(alone.latencyMs.p50, 0.01),
    p99: m.latencyMs.p99 / Math.max(alone.latencyMs.p99, 0.01),
  });
  const workload = `tools/call slow__sleep ${SLEEP_MS} ms, B c=${bConnections}; pool 1x8`;
  /** @param {string} variant @param {import('../lib/load.mjs').Measurement & { floodA?: unknown }} m @param {Record<string, unknown>} more */
  const row = (variant, m, more) => ({
    scenario: name,
    target: 'mcp-gateway',
    variant,
    workload,
    ...m,
    extra: { ...m.extra, ...more },
  });
  return [
    row('B alone', alone, {}),
    row('B beside A (50 in flight), fairness on', on.flooded, {
      floodA: on.flooded.floodA,
      latencyVsAlone: ratios(on.flooded),
      fairness: FAIRNESS,
    }),
    row('B beside A (50 in flight), fairness off', off.flooded, {
      floodA: off.flooded.floodA,
      latencyVsAlone: ratios(off.flooded),
    }),
  ];
}
