// @ts-check
// call-json in per-session mode: every one of the load's sessions gets its own echo process.
import { ECHO_SERVER, startGateway } from '../lib/gateway.mjs';
import { sessionHeaders } from '../lib/mcp.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-per-session';
export const kind = 'gateway';
export const description = 'call-json with mode: per-session (one echo process per session)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const workers = ctx.sessions;
  const gw = await startGateway({
    upstreams: [
      { name: 'echo', script: ECHO_SERVER, mode: 'per-session', pool: { min: 0, max: workers, maxInFlight: 64 } },
    ],
  });
  return measureEchoCalls(ctx, gw, {
    scenario: name,
    variant: `per-session, ${workers} sessions = ${workers} workers`,
    tool: 'echo__echo',
    // Every session's worker is started before the measurement: process start-up is not a call.
    prepare: async (sids) => {
      for (const [i, sid] of sids.entries()) {
        const res = await fetch(gw.url, {
          method: 'POST',
          headers: sessionHeaders(sid),
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: `warm-${i}`,
            method: 'tools/call',
            params: { name: 'echo__echo', arguments: { text: 'warm' } },
          }),
          signal: AbortSignal.timeout(60_000),
        });
        if (res.status !== 200) throw new Error(`warming session ${i}: HTTP ${res.status}`);
        await res.text();
      }
    },
  });
}
