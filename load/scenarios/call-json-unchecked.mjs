// @ts-check
// call-json with the upstream's `validateArguments: false`: the baseline that shows what checking
// tools/call arguments against the tool's inputSchema costs (call-json has it on, the default).
import { DEFAULT_POOL, ECHO_SERVER, poolLabel, startGateway } from '../lib/gateway.mjs';
import { measureEchoCalls } from './call-json.mjs';

export const name = 'call-json-unchecked';
export const kind = 'baseline';
export const description =
  'call-json with validateArguments: false (no inputSchema check): the cost of argument validation';

/** @param {import('../run.mjs').Context} ctx */
export async function run(ctx) {
  const gw = await startGateway({
    upstreams: [{ name: 'echo', script: ECHO_SERVER, pool: DEFAULT_POOL, validateArguments: false }],
  });
  return measureEchoCalls(ctx, gw, {
    scenario: name,
    variant: `pool ${poolLabel(DEFAULT_POOL)}, arguments unchecked`,
    tool: 'echo__echo',
  });
}
