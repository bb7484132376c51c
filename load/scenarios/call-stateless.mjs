// @ts-check
// call-json with 2026-07-28 stateless requests: the same tool, pool and load, but no session;
// each request carries its version and capabilities in _meta and mirrors them into headers.
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-stateless';
export const kind = 'gateway';
export const description = 'call-json as 2026-07-28 stateless requests (no session, _meta and mirrored headers)';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const gw = await startGateway({ upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: DEFAULT_POOL }] });
  return measureEchoCalls(ctx, gw, {
    scenario: name,
    variant: `pool ${poolLabel(DEFAULT_POOL)}, stateless`,
    tool: 'echo__echo',
    stateless: true,
  });
}
