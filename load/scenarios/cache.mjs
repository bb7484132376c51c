// @ts-check
// The result cache (cache:, docs/cache.md) against a 2026-07-28 upstream (examples/modern over
// HTTP, its lists public and its resources/read private, ttlMs 30 s), with an API key so a
// private result has a principal: tools/list and resources/read as stateless requests, each
// without the cache (cache.enabled false) and with it, in the same run. tools/list is answered
// from the catalog either way (it is the control); resources/read goes upstream per request
// without the cache, once per ttl with it.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ROOT, metrics, startGateway } from '../lib/gateway.mjs';
import { counters, measure } from '../lib/load.mjs';
import { POST_HEADERS, STATELESS_VERSION } from '../lib/mcp.mjs';
import { start } from '../lib/processes.mjs';

export const name = 'cache';
export const kind = 'gateway';
export const description =
  'stateless tools/list and resources/read of a 2026-07-28 upstream (examples/modern, ttlMs 30 s) without and with the result cache';

const KEY = 'bench-cache-key-3f9a';
const AUTH = {
  mode: 'api-key',
  apiKeys: [{ name: 'bench', sha256: createHash('sha256').update(KEY).digest('hex') }],
};
const META = {
  'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-gateway-bench', version: '1' },
};
const WORKLOADS = [
  { method: 'tools/list', params: {}, name: undefined, expect: '"tools":[' },
  { method: 'resources/read', params: { uri: 'modern://note' }, name: 'modern://note', expect: '"contents":[' },
];

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const { proc: upstream, match } = await start({
    name: 'modern-fixture',
    command: process.execPath,
    args: [join(ROOT, 'examples/modern/server.mjs'), '--port', '0'],
    ready: /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  });
  const url = /** @type {RegExpExecArray} */ (match)[1];
  const rows = [];
  try {
    for (const enabled of [false, true]) {
      const gw = await startGateway({
        upstreams: [{ name: 'modern', url }],
        extra: { auth: AUTH, cache: { enabled } },
      });
      try {
        for (const w of WORKLOADS) {
          const m = await measure({
            url: gw.url,
            connections: ctx.connections,
            duration: ctx.duration,
            warmup: ctx.warmup,
            makeLoad: () => listLoad(new URL(gw.url).pathname, w),
            meters: { gateway: gw.gatewayPids, upstream: () => [upstream.pid] },
          });
          const seen = await metrics(gw.base, ['mcpgw_cache_lookups_total']);
          m.extra.cacheLookupsSoFar = seen.mcpgw_cache_lookups_total ?? 0;
          rows.push({
            scenario: name,
            target: 'mcp-gateway',
            variant: `${enabled ? 'cache on' : 'cache off'}, ${w.method}`,
            workload: `${w.method} (JSON, 2026-07-28 stateless, API key)`,
            ...m,
          });
        }
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await upstream.stop();
  }
  return rows;
}

let nextId = 1;

/**
 * @param {string} path
 * @param {{ method: string, params: Record<string, unknown>, name: string | undefined, expect: string }} w
 * @returns {import('../lib/load.mjs').Load}
 */
function listLoad(path, w) {
  const c = counters();
  /** @type {string[]} */
  const badSamples = [];
  const headers = {
    ...POST_HEADERS,
    authorization: `Bearer ${KEY}`,
    'mcp-protocol-version': STATELESS_VERSION,
    'mcp-method': w.method,
    ...(w.name ? { 'mcp-name': w.name } : {}),
  };
  const requests = [
    {
      method: 'POST',
      path,
      headers,
      setupRequest: (/** @type {any} */ req) => ({
        ...req,
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: w.method, params: { ...w.params, _meta: META } }),
      }),
      onResponse: (/** @type {number} */ status, /** @type {string} */ body) => {
        c.checked++;
        const rpcError = body.includes('"error":{');
        if (rpcError) c.rpcErrors++;
        if (status !== 200 || rpcError || !body.includes(w.expect)) {
          c.bad++;
          if (badSamples.length < 3) badSamples.push(`${status} ${body.slice(0, 300)}`);
        }
      },
    },
  ];
  return { requests, counters: c, finish: () => (badSamples.length > 0 ? { badSamples } : {}) };
}
