// @ts-check
// call-json with the Redis session store: a throwaway redis-server on a free loopback port.
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { startRedisServer } from '../lib/processes.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-redis';
export const kind = 'gateway';
export const description =
  'call-json with sessions in Redis (redis-server on a free port): default config, and with the session cache off (cacheMs 0)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  return [...(await runWith(ctx, undefined)), ...(await runWith(ctx, 0))];
}

/** @param {import('../run.mjs').Context} ctx @param {number | undefined} cacheMs  undefined: the default */
async function runWith(ctx, cacheMs) {
  const { proc: redis, url: redisUrl } = await startRedisServer();
  try {
    const gw = await startGateway({
      upstreams: [{ name: 'echo', script: ECHO_SERVER }],
      sessions: { store: 'redis', redisUrl, ttlSeconds: 3600, ...(cacheMs === undefined ? {} : { cacheMs }) },
    });
    return await measureEchoCalls(ctx, gw, {
      scenario: name,
      variant: `pool ${poolLabel(DEFAULT_POOL)}, Redis store${cacheMs === undefined ? '' : `, cacheMs ${cacheMs}`}`,
      tool: 'echo__echo',
      // Redis serves the gateway's lookups: its CPU counts with the upstream's.
      meters: { gateway: gw.gatewayPids, upstream: () => [...gw.upstreamPids(), redis.pid] },
    });
  } finally {
    await redis.stop();
  }
}
