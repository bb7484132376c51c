// @ts-check
// Legitimate clients beside hostile ones: the call-json load at BENCH_HOSTILE_CONNECTIONS (10)
// connections over as many sessions, measured twice on one gateway (Redis sessions): alone, then
// with every hostile client of load/lib/hostile.mjs running in loops beside it (SSE clients that
// stop reading, GETs reset before their stream opens, 1 MB task arguments, unanswered
// elicitations, session churn, 3.5 MB calls). What the legitimate clients feel is the ratio of
// the two rows' p50 and p99 (aim: p99 within 3×); the hostile clients' replies are tallied too.
// Two pairs: at a fixed rate (BENCH_HOSTILE_RATE calls/s, 200 by default: what legitimate agents
// send, well under what the gateway serves alone, paced evenly: lib/paced.mjs), which shows the
// waiting the hostile share adds;
// and saturating (as fast as the gateway answers), where the legitimate load competes with the
// hostile one for the 2 cores, so its latency rises by the CPU share it loses as well.
// The hostile clients run in a process of their own (lib/hostile-process.mjs: why), metered as "hostile".
import { startGateway } from '../lib/gateway.mjs';
import { HOSTILE_UPSTREAMS } from '../lib/hostile.mjs';
import { startHostileProcess } from '../lib/hostile-process.mjs';
import { measure } from '../lib/load.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { startRedisServer } from '../lib/processes.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'hostile-mix';
export const kind = 'gateway';
export const description =
  'call-json at c=10 alone, then beside the hostile clients of lib/hostile.mjs: p50/p99 of the legitimate calls';
/** Two measurements that must share one gateway's life: measured once, in the first round. */
export const once = true;

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const connections = Number(process.env.BENCH_HOSTILE_CONNECTIONS ?? 10);
  const rate = Number(process.env.BENCH_HOSTILE_RATE ?? 200);
  const { proc: redis, url: redisUrl } = await startRedisServer();
  try {
    // A share of body bytes per client (by address: no auth here), as a platform team would set it.
    const limits = { maxBodyBytesPerSecondPerClient: Number(process.env.BENCH_HOSTILE_BYTE_RATE ?? 2 * 1024 * 1024) };
    const gw = await startGateway({
      upstreams: HOSTILE_UPSTREAMS,
      sessions: { store: 'redis', redisUrl, ttlSeconds: 3600 },
      extra: { limits },
    });
    try {
      const sids = await openSessions(gw.url, connections);
      /** @type {number[]} */
      const hostilePids = [];
      const legit = (/** @type {boolean} */ quiet, /** @type {number | undefined} */ rate) =>
        measure({
          rate,
          url: gw.url,
          connections,
          duration: ctx.duration,
          warmup: ctx.warmup,
          quiet,
          makeLoad: () =>
            toolCallLoad({
              path: new URL(gw.url).pathname,
              sids,
              tool: 'echo__echo',
              args: { text: 'hello' },
              expectText: 'hello',
            }),
          meters: {
            gateway: gw.gatewayPids,
            upstream: () => [...gw.upstreamPids(), redis.pid],
            hostile: () => hostilePids,
          },
        });
      const calm = await legit(true, undefined);
      const calmAtRate = await legit(true, rate);
      // BENCH_HOSTILE_VECTORS=a,b runs only those vectors (to see which one costs the legitimate clients what).
      const vectors = process.env.BENCH_HOSTILE_VECTORS?.split(',').filter(Boolean);
      const hostile = await startHostileProcess(gw, vectors);
      hostilePids.push(hostile.pid);
      let mixed;
      let mixedAtRate;
      let ended;
      try {
        mixedAtRate = await legit(false, rate);
        mixed = await legit(false, undefined);
      } finally {
        ended = await hostile.stop();
      }
      /** @param {string} variant @param {string} pace @param {import('../lib/load.mjs').Measurement} m */
      const row = (variant, pace, m) => ({
        scenario: name,
        target: 'mcp-gateway',
        variant: `${variant}, ${pace}`,
        workload: `tools/call echo (JSON), c=${connections}, ${pace}`,
        ...m,
      });
      /** @param {import('../lib/load.mjs').Measurement} a @param {import('../lib/load.mjs').Measurement} b */
      const ratios = (a, b) => ({
        p50: b.latencyMs.p50 / Math.max(a.latencyMs.p50, 0.01),
        p99: b.latencyMs.p99 / Math.max(a.latencyMs.p99, 0.01),
      });
      const hostileExtra = { hostile: ended.tallies, cutOff: ended.cutOff, hostileNice: hostile.nice };
      const atRate = `${rate}/s`;
      return [
        row('alone', atRate, calmAtRate),
        row('beside hostile clients', atRate, {
          ...mixedAtRate,
          extra: { ...mixedAtRate.extra, ...hostileExtra, latencyVsAlone: ratios(calmAtRate, mixedAtRate) },
        }),
        row('alone', 'saturating', calm),
        row('beside hostile clients', 'saturating', {
          ...mixed,
          extra: { ...mixed.extra, ...hostileExtra, latencyVsAlone: ratios(calm, mixed) },
        }),
      ];
    } finally {
      await gw.stop();
    }
  } finally {
    await redis.stop();
  }
}
