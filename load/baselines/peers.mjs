// @ts-check
// Peers: supergateway and mcp-proxy fronting the same echo stdio server, driven with the same
// tools/call load as call-json (stateful Streamable HTTP: initialize first, then the session
// header they return). A peer that cannot be made to work is skipped with a note.
import { measure } from '../lib/load.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { PEERS, ensurePeers, startPeer } from '../lib/peers.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'peers';
export const kind = 'baseline';
export const description = 'supergateway and mcp-proxy (installed into load/.peers/) with the call-json load';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  try {
    ensurePeers(ctx.log);
  } catch (err) {
    return PEERS.map((p) => skipped(p.name, `not installed: ${err instanceof Error ? err.message : String(err)}`));
  }
  const only = process.env.BENCH_PEERS?.split(',').map((s) => s.trim());
  const rows = [];
  for (const spec of PEERS) {
    if (only && !only.includes(spec.name)) continue;
    let peer;
    try {
      peer = await startPeer(spec);
      ctx.log(`${spec.name} ${peer.version} at ${peer.url}`);
      const sids = await openSessions(peer.url, ctx.sessions, 10);
      const running = peer;
      const m = await measure({
        url: peer.url,
        connections: ctx.connections,
        duration: ctx.duration,
        warmup: ctx.warmup,
        makeLoad: () =>
          toolCallLoad({ path: '/mcp', sids, tool: 'echo', args: { text: 'hello' }, expectText: 'hello' }),
        meters: { gateway: running.pids, upstream: running.upstreamPids },
      });
      rows.push({
        scenario: name,
        target: spec.name,
        variant: `${peer.version}`,
        workload: 'tools/call echo',
        notes: spec.notes,
        ...m,
      });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      ctx.log(`${spec.name} skipped: ${msg.slice(0, 500)}`);
      rows.push(skipped(spec.name, msg.slice(0, 1000)));
    } finally {
      await peer?.stop();
    }
  }
  return rows;
}

/** @param {string} target @param {string} reason */
function skipped(target, reason) {
  return { scenario: name, target, variant: '', workload: 'tools/call echo', skipped: reason };
}
