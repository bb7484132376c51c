// @ts-check
// Large results (issue 34, item 5): the echo call with a text argument of 1 KB, 100 KB, 1 MB and
// 10 MB (BENCH_PAYLOAD_SIZES, bytes), so the request and the result each carry that many bytes, at
// BENCH_PAYLOAD_CONNECTIONS (4) calls in flight, through the relay floor of the stdio hop (bare
// Fastify + one hop: baselines/relay-floor-server.mjs) and through the gateway, side by side per
// size. Reported: MB/s of results (req/s × size) against the floor's, and the gateway's RSS growth
// (peak during the run minus idle before it) per byte in flight (calls in flight × size): the aim
// is ≤ 2× (a call's arguments and its result held once each, no third copy). limits.bodyBytes is
// raised to 16 MiB so the 10 MB step fits, as an operator who serves such results would.
// The upstream is baselines/list-server.mjs (its tool_0 echoes `text`), written by hand: servers
// built on the MCP SDK refuse a stdio message over 10 MiB (its ReadBuffer), so examples/echo never
// answers the 10 MB step. The floor and the gateway front the same server.
import { join } from 'node:path';
import { startBaselineServer } from '../lib/baseline.mjs';
import { ROOT, startGateway } from '../lib/gateway.mjs';
import { openSessions } from '../lib/mcp.mjs';
import { descendants, rssKb } from '../lib/processes.mjs';
import { measureEcho } from '../lib/workloads.mjs';

export const name = 'payloads';
export const kind = 'gateway';
export const description =
  'echo results of 1 KB to 10 MB at c=4: MB/s through the gateway vs the stdio relay floor, and RSS growth per byte in flight';
/** One gateway's life per size, the RSS read around it: measured once. */
export const once = true;

const SIZES = (process.env.BENCH_PAYLOAD_SIZES ?? '1024,102400,1048576,10485760').split(',').map(Number);
const CONNECTIONS = Number(process.env.BENCH_PAYLOAD_CONNECTIONS ?? 4);
const BODY_BYTES = 16 * 1024 * 1024;
const ECHO_LINES = join(ROOT, 'load/baselines/list-server.mjs');
const TOOL = 'echo__tool_0';

/** @param {number} n */
const sizeLabel = (n) => (n >= 1024 * 1024 ? `${n / 1024 / 1024} MB` : `${n / 1024} KB`);

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const rows = [];
  const fakeSids = Array.from(
    { length: CONNECTIONS },
    (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  );
  for (const size of SIZES) {
    const text = 'x'.repeat(size);
    const workload = `tools/call echo, ${sizeLabel(size)} each way, c=${CONNECTIONS}`;
    const mbPerSec = (/** @type {{ reqPerSec: number }} */ m) => (m.reqPerSec * size) / 1e6;
    const { proc, url } = await startBaselineServer('relay-floor', 'relay-floor-server.mjs', ['stdio', ECHO_LINES]);
    let floorMbPerSec = 0;
    try {
      const m = await measureEcho(
        ctx,
        url,
        fakeSids,
        {
          server: () => [proc.pid],
          upstream: () => descendants(proc.pid),
        },
        { connections: CONNECTIONS, text, tool: TOOL },
      );
      floorMbPerSec = mbPerSec(m);
      rows.push({
        ...{ scenario: name, target: 'fastify + one hop', variant: `stdio, ${sizeLabel(size)}`, workload },
        ...m,
        extra: { ...m.extra, size, mbPerSec: floorMbPerSec },
      });
    } finally {
      await proc.stop();
    }
    const gw = await startGateway({
      upstreams: [{ name: 'echo', script: ECHO_LINES }],
      extra: { limits: { bodyBytes: BODY_BYTES } },
    });
    try {
      const sids = await openSessions(gw.url, CONNECTIONS);
      const idleKb = rssKb(gw.pid);
      const meters = { gateway: gw.gatewayPids, upstream: gw.upstreamPids };
      const m = await measureEcho(ctx, gw.url, sids, meters, { connections: CONNECTIONS, text, tool: TOOL });
      // A GC during the run can leave the peak under the idle RSS: no growth then.
      const growth = Math.max(0, (m.procs.gateway?.peakRssKb ?? idleKb) - idleKb) * 1024;
      const perByte = growth / (CONNECTIONS * size);
      rows.push({
        scenario: name,
        target: 'mcp-gateway',
        variant: `stdio upstream, ${sizeLabel(size)}`,
        workload,
        ...m,
        extra: {
          ...m.extra,
          size,
          mbPerSec: mbPerSec(m),
          vsFloor: mbPerSec(m) / Math.max(floorMbPerSec, 1e-9),
          idleRssKb: idleKb,
          rssGrowthPerByteInFlight: perByte,
          memoryAim: perByte <= 2 ? 'pass' : 'fail',
        },
      });
    } finally {
      await gw.stop();
    }
  }
  return rows;
}
