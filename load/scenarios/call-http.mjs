// @ts-check
// call-json through a remote upstream: a minimal Streamable HTTP MCP server
// (baselines/echo-http-fast.mjs) on a free loopback port, behind a shared pool of one
// upstream session.
import { DEFAULT_POOL, poolLabel, startGateway, startHttpEcho } from '../lib/gateway.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-http';
export const kind = 'gateway';
export const description = 'call-json through a Streamable HTTP upstream (baselines/echo-http-fast.mjs, JSON replies)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const { proc: upstream, url } = await startHttpEcho();
  try {
    const gw = await startGateway({ upstreams: [{ name: 'echo', url }] });
    return await measureEchoCalls(ctx, gw, {
      scenario: name,
      variant: `pool ${poolLabel(DEFAULT_POOL)}, HTTP upstream`,
      tool: 'echo__echo',
      meters: { gateway: gw.gatewayPids, upstream: () => [upstream.pid] },
    });
  } finally {
    await upstream.stop();
  }
}
