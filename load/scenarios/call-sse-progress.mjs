// @ts-check
// tools/call slow__sleep {ms: 0, steps: 10} with a progressToken: each reply is an SSE stream of
// 10 progress notifications and the result. (The slow server accepts ms = 0: z.number().min(0).)
import { DEFAULT_POOL, SLOW_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { measure } from '../lib/load.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'call-sse-progress';
export const kind = 'gateway';
export const description =
  'tools/call slow__sleep {ms:0, steps:10} + progressToken: SSE reply, 10 progress events per call';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const pool = DEFAULT_POOL;
  const gw = await startGateway({ upstreams: [{ name: 'slow', script: SLOW_SERVER, pool }] });
  try {
    const sids = await openSessions(gw.url, ctx.sessions);
    const m = await measure({
      url: gw.url,
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      makeLoad: () =>
        toolCallLoad({
          path: new URL(gw.url).pathname,
          sids,
          tool: 'slow__sleep',
          args: { ms: 0, steps: 10 },
          expectText: 'slept 0ms',
          expectProgress: 10,
        }),
      meters: { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
    });
    return [
      {
        scenario: name,
        target: 'mcp-gateway',
        variant: `pool ${poolLabel(pool)}`,
        workload: 'tools/call + 10 progress (SSE)',
        ...m,
      },
    ];
  } finally {
    await gw.stop();
  }
}
