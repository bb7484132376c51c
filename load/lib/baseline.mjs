// @ts-check
// The baselines that stand in for the gateway (bare Fastify, the relay floors): a server script
// that prints "listening <url>", run with BENCH_NODE_ARGS, measured with call-json's load.
import { join } from 'node:path';
import { ROOT } from './gateway.mjs';
import { measure } from './load.mjs';
import { benchNodeArgs, start } from './processes.mjs';
import { toolCallLoad } from './workloads.mjs';

/**
 * @param {string} name
 * @param {string} script  under load/baselines/
 * @param {string[]} [args]
 */
export async function startBaselineServer(name, script, args = []) {
  const { proc, match } = await start({
    name,
    command: process.execPath,
    args: [...benchNodeArgs(), join(ROOT, 'load/baselines', script), ...args],
    cwd: ROOT,
    ready: /listening (\S+)/,
  });
  return { proc, url: /** @type {RegExpExecArray} */ (match)[1] };
}

/**
 * call-json's tools/call load against `url`. Baselines check no session ids; the headers are
 * sent all the same (made-up ids), so the requests are the same bytes as the gateway's.
 * @param {import('../run.mjs').Context} ctx
 * @param {string} url
 * @param {Record<string, () => number[]>} meters
 */
export function measureBaselineCalls(ctx, url, meters) {
  const sids = Array.from({ length: ctx.sessions }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  return measure({
    url,
    connections: ctx.connections,
    duration: ctx.duration,
    warmup: ctx.warmup,
    makeLoad: () =>
      toolCallLoad({ path: '/mcp', sids, tool: 'echo__echo', args: { text: 'hello' }, expectText: 'hello' }),
    meters,
  });
}
