// @ts-check
// call-json with other pool settings, to find the best one on this machine.
// BENCH_POOLS=1x64,2x64,3x64,2x16 (workers x maxInFlight; min = max = workers).
import { parsePool } from '../lib/gateway.mjs';
import { run as callJson } from './call-json.mjs';

export const name = 'pool-sweep';
export const kind = 'gateway';
/** A sweep of four settings already: measured once, in the first round. */
export const once = true;
export const description = 'call-json with several pool settings (BENCH_POOLS, default 1x64,2x64,3x64,2x16)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const pools = (process.env.BENCH_POOLS ?? '1x64,2x64,3x64,2x16').split(',').map(parsePool);
  const rows = [];
  for (const pool of pools) rows.push(...(await callJson(ctx, pool, name)));
  return rows;
}
