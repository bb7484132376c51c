// @ts-check
// call-json with sessions in Redis, the gateway as one process (cluster.workers 1) and as a
// node:cluster of 2 workers on the same port: what a second core buys. On a 2-core machine the
// load generator, the upstreams and Redis share those cores, so the second worker competes with
// them: the row says what it gives there, not what it gives on a pod of its own.
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { startRedisServer } from '../lib/processes.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'cluster';
export const kind = 'gateway';
export const description = 'call-json with Redis sessions, cluster.workers 1 and 2 (node:cluster on one port)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const workerCounts = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
  const rows = [];
  for (const workers of workerCounts) rows.push(...(await runWith(ctx, workers)));
  return rows;
}

/** @param {import('../run.mjs').Context} ctx @param {number} workers */
async function runWith(ctx, workers) {
  const { proc: redis, url: redisUrl } = await startRedisServer();
  try {
    const gw = await startGateway({
      upstreams: [{ name: 'echo', script: ECHO_SERVER }],
      sessions: { store: 'redis', redisUrl, ttlSeconds: 3600 },
      workers,
    });
    return await measureEchoCalls(ctx, gw, {
      scenario: name,
      variant: `pool ${poolLabel(DEFAULT_POOL)} per worker, Redis store, workers ${workers}`,
      tool: 'echo__echo',
      // The primary and every worker are the gateway; Redis counts with the upstreams.
      meters: { gateway: gw.gatewayPids, upstream: () => [...gw.upstreamPids(), redis.pid] },
    });
  } finally {
    await redis.stop();
  }
}
