// @ts-check
// call-json's load (tools/call echo__echo, shared stdio pool 1x64, memory store, c=50) over the
// websocket transport: each connection is one session in a closed loop (lib/connection-load.mjs).
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { openWebSocket, measureConnections } from '../lib/connection-load.mjs';

export const name = 'call-websocket';
export const kind = 'gateway';
export const description = 'tools/call echo__echo over WebSocket (subprotocol mcp), one session per connection, closed loop';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const pool = DEFAULT_POOL;
  const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER, pool }] });
  try {
    const m = await measureConnections({
      open: openWebSocket,
      base: new URL(gw.url).origin,
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      tool: 'echo__echo',
      args: { text: 'hello' },
      expectText: 'hello',
      meters: { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
    });
    return [{ scenario: name, target: 'mcp-gateway', variant: `pool ${poolLabel(pool)}`, workload: 'tools/call echo (websocket)', ...m }];
  } finally {
    await gw.stop();
  }
}
