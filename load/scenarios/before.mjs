// @ts-check
// The same scenarios against an earlier build, side by side in one run: BENCH_COMPARE_ROOT names
// another checkout (built: its dist/main.js), BENCH_COMPARE the scenarios to repeat there
// (default call-json,call-stateless,call-http). Each gets a `<name>@before` twin that runs right
// after it in every round, so both see the same machine; only the gateway's code differs (the
// load, the upstreams and the harness are this checkout's).
//
//   git worktree add /tmp/before <rev> && (cd /tmp/before && npm ci && npm run build)
//   BENCH_COMPARE_ROOT=/tmp/before npm run bench -- bare-fastify call-json call-stateless call-http
import { execFileSync } from 'node:child_process';
import { useGatewayRoot } from '../lib/gateway.mjs';

/** @typedef {{ name: string, kind: string, description: string, run: (ctx: any) => Promise<Record<string, any>[]> }} Scenario */

/** @param {string} root */
function revisionOf(root) {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return root;
  }
}

/**
 * `scenarios` with a `@before` twin after each one named in BENCH_COMPARE, when
 * BENCH_COMPARE_ROOT is set; `scenarios` unchanged otherwise.
 * @param {Scenario[]} scenarios
 * @returns {Scenario[]}
 */
export function withBeforeTwins(scenarios) {
  const root = process.env.BENCH_COMPARE_ROOT;
  if (!root) return scenarios;
  const names = new Set(
    (process.env.BENCH_COMPARE ?? 'call-json,call-stateless,call-http').split(',').map((s) => s.trim()),
  );
  const rev = revisionOf(root);
  return scenarios.flatMap((s) => {
    if (!names.has(s.name)) return [s];
    /** @type {Scenario} */
    const twin = {
      name: `${s.name}@before`,
      kind: 'baseline',
      description: `${s.name} with the gateway built at ${rev} (${root})`,
      async run(ctx) {
        useGatewayRoot(root);
        try {
          const rows = await s.run(ctx);
          return rows.map((r) => ({
            ...r,
            scenario: `${r.scenario}@before`,
            variant: `${r.variant ?? ''}, before: ${rev}`.replace(/^, /, ''),
          }));
        } finally {
          useGatewayRoot(undefined);
        }
      },
    };
    return [s, twin];
  });
}
