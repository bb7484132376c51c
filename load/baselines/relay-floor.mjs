// @ts-check
// Baseline: bare Fastify plus one stdio hop (relay-floor-server.mjs), the same load as call-json.
// What a relay costs before it does anything a gateway must do: the distance between bare-fastify
// and this row is the hop's, between this row and call-json the gateway's own work.
import { join } from 'node:path';
import { ECHO_SERVER, ROOT } from '../lib/gateway.mjs';
import { measure } from '../lib/load.mjs';
import { descendants, start } from '../lib/processes.mjs';
import { toolCallLoad } from '../lib/workloads.mjs';

export const name = 'relay-floor';
export const kind = 'baseline';
export const description = 'bare Fastify relaying each tools/call to examples/echo/server.mjs over stdio (fresh ids, batched writes), nothing else: the floor of a stdio gateway';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const { proc, match } = await start({
    name: 'relay-floor',
    command: process.execPath,
    args: [...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean), join(ROOT, 'load/baselines/relay-floor-server.mjs'), ECHO_SERVER],
    cwd: ROOT,
    ready: /listening (\S+)/,
  });
  try {
    const url = /** @type {RegExpExecArray} */ (match)[1];
    const sids = Array.from({ length: ctx.sessions }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const m = await measure({
      url,
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      makeLoad: () => toolCallLoad({ path: '/mcp', sids, tool: 'echo__echo', args: { text: 'hello' }, expectText: 'hello' }),
      meters: { server: () => [proc.pid], upstream: () => descendants(proc.pid) },
    });
    return [{ scenario: name, target: 'fastify + stdio hop', variant: 'relay floor', workload: 'tools/call (JSON)', ...m }];
  } finally {
    await proc.stop();
  }
}

