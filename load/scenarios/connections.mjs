// @ts-check
// Many connections (issue 34, item 3): call-json's load at c = 10, 100, 1,000 and 5,000
// (BENCH_CONNECTION_STEPS) against one gateway, each connection on its own session up to 1,000
// sessions (BENCH_CONNECTION_SESSIONS, then round-robin): 0 errors, throughput and p99 per step.
// Both the bench and the gateway hold one descriptor per connection: steps past `ulimit -n`
// minus a headroom are scaled down and said so (raise it as an operator would: ulimit -n 20000).
import { ECHO_SERVER, startGateway } from '../lib/gateway.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { openFilesLimit } from '../lib/processes.mjs';
import { measureEcho } from '../lib/workloads.mjs';

export const name = 'connections';
export const kind = 'gateway';
export const description = 'call-json at c = 10, 100, 1,000 and 5,000 connections: errors, req/s and p99 per step';

const STEPS = (process.env.BENCH_CONNECTION_STEPS ?? '10,100,1000,5000').split(',').map(Number);
const SESSIONS = Number(process.env.BENCH_CONNECTION_SESSIONS ?? 1000);

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const limit = openFilesLimit() - 512;
  const gw = await startGateway({
    upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: { min: 1, max: 1, maxInFlight: 64 } }],
  });
  try {
    const sids = await openSessions(gw.url, SESSIONS);
    const rows = [];
    for (const asked of STEPS) {
      const connections = Math.min(asked, limit);
      const m = await measureEcho(
        ctx,
        gw.url,
        sids,
        { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
        { connections },
      );
      rows.push({
        scenario: name,
        target: 'mcp-gateway',
        variant: `c=${connections}`,
        workload: `tools/call echo (JSON), c=${connections}, ${Math.min(SESSIONS, connections)}+ sessions`,
        notes: connections < asked ? `asked c=${asked}, ulimit -n allows ${connections}` : undefined,
        ...m,
      });
    }
    return rows;
  } finally {
    await gw.stop();
  }
}
