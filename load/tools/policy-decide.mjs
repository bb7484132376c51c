#!/usr/bin/env node
// @ts-check
// What one policy decision costs in process (docs/policy.md, Cost): PolicySet.decide and
// mayAllow called N times on the built gateway (dist/, so `npm run build` first), with a fresh
// request object each time as the policy step builds one. Not a load run: one process, no
// network, a few seconds of CPU. Prints µs of CPU per decision for each case.
//
//   node load/tools/policy-decide.mjs [--n 10000] [--policy examples/policy/bench-20.cedar] [--no-cache]
//
// --no-cache compiles the set with its decision cache off (cacheEntries: 0), the cost of every
// decision crossing into the WASM evaluator.
//
// Cases: one call repeated (one principal, one tool: the bench's call-admitted row); calls cycling
// over 1,000 principal x tool pairs; a list: mayAllow for each tool of a 100-tool page, the page
// decided N / 100 times. Each case runs N times untimed first, then N times timed.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PolicySet } from '../../dist/policy/policy-set.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const args = process.argv.slice(2);
const opt = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : /** @type {string} */ (args[i + 1]);
};
const n = Number(opt('--n', '10000'));
const file = resolve(ROOT, opt('--policy', join('examples', 'policy', 'bench-20.cedar')));
const cached = !args.includes('--no-cache');
const set = PolicySet.compile(readFileSync(file, 'utf8'), file, ...(cached ? [] : [{ cacheEntries: 0 }]));

/** @param {number} p @param {number} t @param {Record<string, string> | undefined} args */
function request(p, t, args) {
  const name = `t${t % 20}__tool${t}`;
  return {
    principal: {
      kind: /** @type {const} */ ('client'),
      id: `client-${p}`,
      name: `client-${p}`,
      scopes: [`s${p % 20}`, 'reader'],
      claims: {},
      address: '127.0.0.1',
    },
    action: /** @type {const} */ ('callTool'),
    resource: {
      type: /** @type {const} */ ('Tool'),
      id: name,
      attrs: {
        name,
        upstream: `t${t % 20}`,
        original: `tool${t}`,
        server: 'main',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    context: {
      method: 'tools/call',
      era: '2025',
      transport: 'streamable-http',
      hour: 10,
      weekday: 2,
      epoch: Math.floor(Date.now() / 1000),
    },
    arguments: args,
  };
}

/** CPU seconds used since `since`. @param {NodeJS.CpuUsage} since */
const cpuSeconds = (since) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};

/**
 * µs of CPU per decision for `count` decisions made by `step(i)`, after as many untimed and for at
 * least 2 s of CPU (the JIT warmed up, as in a gateway that has served a while; the pairs' and the page's
 * decisions made once).
 * @param {(i: number) => void} step
 */
function measure(count, step) {
  const warm = process.cpuUsage();
  for (let i = 0; i < count || cpuSeconds(warm) < 2; i++) step(i);
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) step(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const PAGE = 100;
const cases = [
  ['call, one principal and tool', measure(n, () => set.decide(request(3, 3, { text: 'hello' })))],
  [
    'call, 1,000 principal x tool pairs',
    measure(n, (i) => set.decide(request(i % 50, Math.floor(i / 50) % 20, { text: 'hello' }))),
  ],
  ['list, mayAllow per tool of a 100-tool page', measure(n, (i) => set.mayAllow(request(3, i % PAGE, undefined)))],
];
process.stdout.write(`${file} (${set.ids.length} policies), cache ${cached ? 'on' : 'off'}, N=${n}\n`);
for (const [label, us] of cases) process.stdout.write(`  ${label}: ${Number(us).toFixed(2)} µs/decision\n`);
