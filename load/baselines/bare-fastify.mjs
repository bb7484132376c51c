// @ts-check
// Baseline: what Fastify alone does with the same tools/call load (c=50, JSON replies).
import { measureBaselineCalls, startBaselineServer } from '../lib/baseline.mjs';

export const name = 'bare-fastify';
export const kind = 'baseline';
export const description = 'Fastify 5 answering the same POST with a canned JSON-RPC result: the HTTP ceiling';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const { proc, url } = await startBaselineServer('bare-fastify', 'bare-fastify-server.mjs');
  try {
    const m = await measureBaselineCalls(ctx, url, { server: () => [proc.pid] });
    return [{ scenario: name, target: 'fastify', variant: 'canned result', workload: 'tools/call (JSON)', ...m }];
  } finally {
    await proc.stop();
  }
}
