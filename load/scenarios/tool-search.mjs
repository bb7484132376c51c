// @ts-check
// Tool search (toolSearch, docs/tool-search.md) on and off in the same run, for issue 30's "tools/list
// and tools/call throughput unchanged with search on": call-json's gateway (the echo example, shared
// pool 1x64, sessions round-robin) with toolSearch off, then on (echo__echo pinned); per gateway a
// session's tools/list and a direct tools/call echo__echo, and with search on also the same call
// through call_tool (what the agents that call only listed tools pay).
import { DEFAULT_POOL, ECHO_SERVER, startGateway } from '../lib/gateway.mjs';
import { counters, measure } from '../lib/load.mjs';
import { openSessions, sessionHeaders } from '../lib/mcp.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'tool-search';
export const kind = 'gateway';
export const description =
  'tools/list and tools/call echo__echo with toolSearch off, then on (echo__echo pinned), and call_tool of echo__echo';

const TEXT = 'hello';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const rows = [];
  for (const on of [false, true]) {
    const gw = await startGateway({
      upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: DEFAULT_POOL }],
      extra: on ? { toolSearch: { enabled: true, pinned: ['echo__echo'] } } : {},
    });
    try {
      const sids = await openSessions(gw.url, ctx.sessions);
      const path = new URL(gw.url).pathname;
      const meters = { gateway: gw.gatewayPids, upstream: gw.upstreamPids };
      /** @type {Array<{ variant: string, workload: string, makeLoad: () => import('../lib/load.mjs').Load }>} */
      const loads = [
        {
          variant: `search ${on ? 'on' : 'off'}, tools/list`,
          workload: 'tools/list (JSON)',
          makeLoad: () => listLoad(path, sids, on),
        },
        {
          variant: `search ${on ? 'on' : 'off'}, tools/call`,
          workload: 'tools/call echo (JSON)',
          makeLoad: () => toolCallLoad({ path, sids, tool: 'echo__echo', args: { text: TEXT }, expectText: TEXT }),
        },
      ];
      if (on)
        loads.push({
          variant: 'search on, call_tool',
          workload: 'tools/call call_tool → echo (JSON)',
          makeLoad: () =>
            toolCallLoad({
              path,
              sids,
              tool: 'call_tool',
              args: { name: 'echo__echo', arguments: { text: TEXT } },
              expectText: TEXT,
            }),
        });
      for (const l of loads) {
        const m = await measure({
          url: gw.url,
          connections: ctx.connections,
          duration: ctx.duration,
          warmup: ctx.warmup,
          makeLoad: l.makeLoad,
          meters,
        });
        rows.push({ scenario: name, target: 'mcp-gateway', variant: l.variant, workload: l.workload, ...m });
      }
    } finally {
      await gw.stop();
    }
  }
  return rows;
}

let nextId = 1;

/**
 * tools/list over `sids` round-robin; a reply is good when it lists tools, and with search on
 * starts with search_tools (off: lists echo__echo without it).
 * @param {string} path @param {string[]} sids @param {boolean} on
 * @returns {import('../lib/load.mjs').Load}
 */
function listLoad(path, sids, on) {
  const c = counters();
  /** @type {string[]} */
  const badSamples = [];
  let k = 0;
  const requests = [
    {
      method: 'POST',
      path,
      setupRequest: (/** @type {any} */ req) => ({
        ...req,
        headers: sessionHeaders(/** @type {string} */ (sids[k++ % sids.length])),
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/list' }),
      }),
      onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
        c.checked++;
        const rpcError = body.includes('"error":{');
        if (rpcError) c.rpcErrors++;
        const shape = on
          ? body.includes('"tools":[{"name":"search_tools"')
          : body.includes('"echo__echo"') && !body.includes('search_tools');
        if (status !== 200 || rpcError || !shape) {
          c.bad++;
          if (badSamples.length < 3) badSamples.push(`${status} ${body.slice(0, 300)}`);
        }
      },
    },
  ];
  return { requests, counters: c, finish: () => (badSamples.length > 0 ? { badSamples } : {}) };
}
