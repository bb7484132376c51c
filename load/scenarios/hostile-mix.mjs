// @ts-check
// Legitimate clients beside hostile ones: the call-json load at BENCH_HOSTILE_CONNECTIONS (10)
// connections over as many sessions, measured twice on one gateway (Redis sessions): alone, then
// with every hostile client of load/lib/hostile.mjs running in loops beside it (SSE clients that
// stop reading, GETs reset before their stream opens, 1 MB task arguments, unanswered
// elicitations, session churn, 3.5 MB calls). What the legitimate clients feel is the ratio of
// the two rows' p50 and p99 (aim: p99 within 3×); the hostile clients' replies are tallied too.
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
      const legit = (/** @type {boolean} */ quiet) =>
        measure({
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
      const calm = await legit(true);
      // BENCH_HOSTILE_VECTORS=a,b runs only those vectors (to see which one costs the legitimate clients what).
      const vectors = process.env.BENCH_HOSTILE_VECTORS?.split(',').filter(Boolean);
      const hostile = await startHostileProcess(gw, vectors);
      hostilePids.push(hostile.pid);
      let mixed;
      let ended;
      try {
        mixed = await legit(false);
      } finally {
        ended = await hostile.stop();
      }
      const row = (/** @type {string} */ variant, /** @type {import('../lib/load.mjs').Measurement} */ m) => ({
        scenario: name,
        target: 'mcp-gateway',
        variant,
        workload: `tools/call echo (JSON), c=${connections}`,
        ...m,
      });
      const ratios = {
        p50: mixed.latencyMs.p50 / Math.max(calm.latencyMs.p50, 0.01),
        p99: mixed.latencyMs.p99 / Math.max(calm.latencyMs.p99, 0.01),
      };
      return [
        row('alone', calm),
        row('beside hostile clients', {
          ...mixed,
          extra: { ...mixed.extra, hostile: ended.tallies, cutOff: ended.cutOff, latencyVsAlone: ratios },
        }),
      ];
    } finally {
      await gw.stop();
    }
  } finally {
    await redis.stop();
  }
}
