// @ts-check
// call-json's load (tools/call echo__echo, shared stdio pool 1x64, memory store, c=50) over a
// connection transport (WebSocket, legacy HTTP+SSE): each connection is one session in a closed
// loop (lib/connection-load.mjs). One run() for both; call-websocket.mjs and call-legacy-sse.mjs name them.
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { measureConnections } from '../lib/connection-load.mjs';

/**
 * @param {string} name the scenario's name
 * @param {string} transport the workload's label
 * @param {Parameters<typeof measureConnections>[0]['open']} open how a connection is opened
 * @returns {(ctx: import('../run.mjs').Context) => Promise<object[]>}
 */
export function connectionCall(name, transport, open) {
  return async (ctx) => {
    const pool = DEFAULT_POOL;
    const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER, pool }] });
    try {
      const m = await measureConnections({
        open,
        base: new URL(gw.url).origin,
        connections: ctx.connections,
        duration: ctx.duration,
        warmup: ctx.warmup,
        tool: 'echo__echo',
        args: { text: 'hello' },
        expectText: 'hello',
        meters: { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
      });
      return [
        {
          scenario: name,
          target: 'mcp-gateway',
          variant: `pool ${poolLabel(pool)}`,
          workload: `tools/call echo (${transport})`,
          ...m,
        },
      ];
    } finally {
      await gw.stop();
    }
  };
}
