// @ts-check
// One session's whole life per iteration: initialize, notifications/initialized, tools/call,
// DELETE. Measures what creating (and ending) a session costs; reported as sessions/s.
import { DEFAULT_POOL, ECHO_SERVER, metric, poolLabel, startGateway } from '../lib/gateway.mjs';
import { measure } from '../lib/load.mjs';
import { sessionChurnLoad } from '../lib/workloads.mjs';

export const name = 'session-churn';
export const kind = 'gateway';
export const description = 'initialize + initialized + tools/call + DELETE per iteration (4 HTTP requests)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const pool = DEFAULT_POOL;
  const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER, pool }] });
  try {
    const m = await measure({
      url: gw.url,
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      makeLoad: () => sessionChurnLoad({ path: new URL(gw.url).pathname }),
      meters: { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
    });
    const deleted = Number(m.extra.sessionsDeleted ?? 0);
    // Iterations cut off by the end of the run leave their sessions behind.
    const leftOpen = await metric(gw.base, 'mcpgw_sessions_active');
    return [
      {
        scenario: name,
        target: 'mcp-gateway',
        variant: `pool ${poolLabel(pool)}`,
        workload: '4 requests per session',
        ...m,
        sessionsPerSec: deleted / m.seconds,
        extra: { ...m.extra, sessionsLeftOpenAtEnd: leftOpen },
      },
    ];
  } finally {
    await gw.stop();
  }
}
