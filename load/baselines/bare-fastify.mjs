// @ts-check
// Baseline: what Fastify alone does with the same tools/call load (c=50, JSON replies).
import { join } from 'node:path';
import { ROOT } from '../lib/gateway.mjs';
import { measure } from '../lib/load.mjs';
import { start } from '../lib/processes.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'bare-fastify';
export const kind = 'baseline';
export const description = 'Fastify 5 answering the same POST with a canned JSON-RPC result: the HTTP ceiling';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const { proc, match } = await start({
    name: 'bare-fastify',
    command: process.execPath,
    args: [...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean), join(ROOT, 'load/baselines/bare-fastify-server.mjs')],
    cwd: ROOT,
    ready: /listening (\S+)/,
  });
  try {
    const url = /** @type {RegExpExecArray} */ (match)[1];
    // Session ids are not checked here; the headers are sent anyway so the requests are the same bytes.
    const sids = Array.from({ length: ctx.sessions }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const m = await measure({
      url,
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      makeLoad: () => toolCallLoad({ path: '/mcp', sids, tool: 'echo__echo', args: { text: 'hello' }, expectText: 'hello' }),
      meters: { server: () => [proc.pid] },
    });
    return [{ scenario: name, target: 'fastify', variant: 'canned result', workload: 'tools/call (JSON)', ...m }];
  } finally {
    await proc.stop();
  }
}
