// @ts-check
// Many upstreams (issue 34, item 7): BENCH_MANY_UPSTREAMS (50) stdio upstreams of 10 tools each
// (baselines/list-server.mjs) behind one gateway, BENCH_MANY_SLOW (3) of them answering tools/list
// after BENCH_MANY_SLOW_MS (2000). Measured: from spawn to the listening line and to /readyz 200
// (every pool has a ready worker), then a new session's first tools/list (latency, and how many
// tools it lists), then call-json's load over one fast upstream's tool (c=10) for throughput with
// that many upstreams behind the gateway.
import { join } from 'node:path';
import { ROOT, startGateway } from '../lib/gateway.mjs';
import { openSession, openSessions, sessionHeaders } from '../lib/mcp.mjs';
import { measureEcho } from '../lib/workloads.mjs';

export const name = 'many-upstreams';
export const kind = 'gateway';
export const description =
  "50 stdio upstreams (3 slow to list, 2 s): start-up to ready, a new session's first tools/list, calls at c=10";
/** Start-up is measured once per gateway life: once. */
export const once = true;

const COUNT = Number(process.env.BENCH_MANY_UPSTREAMS ?? 50);
const SLOW = Number(process.env.BENCH_MANY_SLOW ?? 3);
const SLOW_MS = Number(process.env.BENCH_MANY_SLOW_MS ?? 2000);
const SERVER = join(ROOT, 'load/baselines/list-server.mjs');

/** @param {string} url @param {string} sid */
async function listAll(url, sid) {
  const t0 = process.hrtime.bigint();
  let cursor;
  let tools = 0;
  let pages = 0;
  do {
    const params = cursor === undefined ? {} : { cursor };
    const res = await fetch(url, {
      method: 'POST',
      headers: sessionHeaders(sid),
      body: JSON.stringify({ jsonrpc: '2.0', id: pages + 1, method: 'tools/list', params }),
    });
    const body = await res.json();
    if (!body.result) throw new Error(`tools/list: HTTP ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    tools += body.result.tools.length;
    cursor = body.result.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, tools, pages };
}

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const upstreams = Array.from({ length: COUNT }, (_, i) => ({
    name: `u${i}`,
    script: SERVER,
    args: [String(i < SLOW ? SLOW_MS : 0)],
    pool: { min: 1, max: 1, maxInFlight: 64 },
  }));
  const gw = await startGateway({ upstreams });
  try {
    const readyMs = Date.now() - gw.spawnedAt;
    const sid = await openSession(gw.url);
    const first = await listAll(gw.url, sid);
    const second = await listAll(gw.url, sid);
    const sids = await openSessions(gw.url, 10);
    const tool = `u${COUNT - 1}__tool_0`;
    const meters = { gateway: gw.gatewayPids, upstream: gw.upstreamPids };
    const m = await measureEcho(ctx, gw.url, sids, meters, { connections: 10, tool });
    return [
      {
        scenario: name,
        target: 'mcp-gateway',
        variant: `${COUNT} stdio upstreams, ${SLOW} slow to list (${SLOW_MS} ms)`,
        workload: `tools/call ${tool}, c=10`,
        ...m,
        extra: {
          ...m.extra,
          upstreams: COUNT,
          slow: SLOW,
          slowMs: SLOW_MS,
          spawnToReadyMs: readyMs,
          firstList: first,
          secondList: second,
          expectedTools: COUNT * 10,
        },
      },
    ];
  } finally {
    await gw.stop();
  }
}
