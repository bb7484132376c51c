// @ts-check
// tools/call echo__echo through a shared stdio pool (memory store), c=50, JSON replies.
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { measure } from '../lib/load.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'call-json';
export const kind = 'gateway';
export const description = 'tools/call echo__echo via a shared stdio pool, JSON replies, sessions round-robin';

/**
 * @param {import('../run.mjs').Context} ctx
 * @param {import('../lib/gateway.mjs').Pool} [pool]
 * @param {string} [scenario]
 */
export async function run(ctx, pool = DEFAULT_POOL, scenario = name) {
  const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER, pool }] });
  return measureEchoCalls(ctx, gw, { scenario, variant: `pool ${poolLabel(pool)}`, tool: 'echo__echo' });
}

/**
 * The call-json load against a gateway already started (stopped here): the other call
 * scenarios (Redis store, HTTP upstream, per-session) change only the gateway.
 * @param {import('../run.mjs').Context} ctx
 * @param {import('../lib/gateway.mjs').RunningGateway} gw
 * @param {{ scenario: string, variant: string, tool: string, meters?: Record<string, () => number[]>, prepare?: (sids: string[]) => Promise<void>, stateless?: boolean, text?: string }} o  text: echoed (default hello)
 */
export async function measureEchoCalls(
  ctx,
  gw,
  { scenario, variant, tool, meters, prepare, stateless, text = 'hello' },
) {
  try {
    const sids = stateless ? undefined : await openSessions(gw.url, ctx.sessions);
    if (sids) await prepare?.(sids);
    const m = await measure({
      url: gw.url,
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      makeLoad: () => toolCallLoad({ path: new URL(gw.url).pathname, sids, tool, args: { text }, expectText: text }),
      meters: meters ?? { gateway: gw.gatewayPids, upstream: gw.upstreamPids },
    });
    if (gw.cpuProfDir) {
      // The profile covers the whole process life; the measured run starts this far in.
      const skip = Math.ceil((m.window.start - gw.spawnedAt) / 1000);
      const until = Math.floor((m.window.end - gw.spawnedAt) / 1000);
      m.extra.cpuProfile = { dir: gw.cpuProfDir, fromS: skip, untilS: until };
      ctx.log(
        `cpu profile of pid ${gw.pid} in ${gw.cpuProfDir} (written when the gateway exits); summary of the measured run:`,
      );
      ctx.log(`  node load/tools/profile-summary.mjs ${gw.cpuProfDir} --skip ${skip} --until ${until}`);
    }
    return [
      {
        scenario,
        target: 'mcp-gateway',
        variant,
        workload: stateless ? 'tools/call echo (JSON, 2026-07-28 stateless)' : 'tools/call echo (JSON)',
        ...m,
      },
    ];
  } finally {
    await gw.stop();
  }
}
