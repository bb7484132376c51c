#!/usr/bin/env node
// @ts-check
// A `perf record -g` profile of a Node process (run with --perf-basic-prof) by the nearest
// JavaScript frame of each sample: a V8 builtin, a JSON.parse or a syscall is charged to the JS
// function that called it, so a function's number is what it costs with what it asked for. With
// the number of requests the profile covers, the numbers are µs of CPU per request.
//
//   node load/tools/perf-frames.mjs <perf.data> [--requests N] [--hz 4000] [--top 30] [--match dist/]
//
// Prints the areas (the gateway's folders under dist/, packages, Node's internals, native code
// with no JS caller), then the functions whose location contains --match, each with its
// heaviest leaves. Read it before the process's /tmp/perf-<pid>.map is removed.
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const opt = (/** @type {string} */ name, /** @type {string} */ fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : /** @type {string} */ (args[i + 1]);
};
const file = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!file) {
  process.stderr.write(
    'usage: node load/tools/perf-frames.mjs <perf.data> [--requests N] [--hz 4000] [--top 30] [--match dist/]\n',
  );
  process.exit(2);
}
const requests = Number(opt('--requests', '0'));
const hz = Number(opt('--hz', '4000'));
const top = Number(opt('--top', '30'));
const match = opt('--match', 'dist/');

const script = spawnSync('perf', ['script', '-i', file, '-F', 'ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 });
if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);

/** @param {string} line */
const symbol = (line) =>
  line
    .trim()
    .replace(/^[0-9a-f]+ /, '')
    .replace(/\+0x[0-9a-f]+$/, '');

/** Where a JS frame's code lives: a folder of dist/, a package, or Node's own module. @param {string} frame */
function area(frame) {
  const location =
    frame
      .split(' ')
      .at(-1)
      ?.replace(/:\d+:\d+$/, '') ?? frame;
  const dist = location.indexOf('dist/');
  if (dist !== -1)
    return `gateway ${
      location
        .slice(dist + 5)
        .split('/')
        .slice(0, -1)
        .join('/') || '.'
    }`;
  const nm = location.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const parts = location.slice(nm + 13).split('/');
    return `package ${parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  return `node ${location.replace(/^node:/, '')}`;
}

/** @type {Map<string, number>} */
const areas = new Map();
/** @type {Map<string, Map<string, number>>} */
const functions = new Map();
let samples = 0;
const add = (/** @type {Map<string, number>} */ m, /** @type {string} */ k) => m.set(k, (m.get(k) ?? 0) + 1);
for (const block of script.stdout.split('\n\n')) {
  const frames = block
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(symbol);
  if (frames.length === 0) continue;
  samples++;
  const i = frames.findIndex((f) => f.startsWith('JS:'));
  if (i === -1) {
    add(areas, `native ${frames[0]?.slice(0, 60)}`);
    continue;
  }
  const frame = /** @type {string} */ (frames[i]);
  add(areas, area(frame));
  if (!frame.includes(match)) continue;
  const leaves = functions.get(frame) ?? new Map();
  functions.set(frame, leaves);
  add(leaves, i === 0 ? '(self)' : /** @type {string} */ (frames[0]).slice(0, 70));
}

const unit = requests > 0 ? 'µs/req' : 'samples';
const cost = (/** @type {number} */ n) =>
  (requests > 0 ? ((n / hz) * 1e6) / requests : n).toFixed(requests > 0 ? 1 : 0).padStart(8);
const sum = (/** @type {Map<string, number>} */ m) => [...m.values()].reduce((a, b) => a + b, 0);
process.stdout.write(
  `${samples} samples${requests > 0 ? `, ${cost(samples).trim()} µs per request over ${requests} requests at ${hz} Hz` : ''}\n\nby area (${unit}):\n`,
);
for (const [k, n] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${cost(n)}  ${k}\n`);
process.stdout.write(`\nfunctions matching "${match}" (${unit}), with their heaviest leaves:\n`);
for (const [k, leaves] of [...functions].sort((a, b) => sum(b[1]) - sum(a[1])).slice(0, top)) {
  process.stdout.write(`${cost(sum(leaves))}  ${k.replace(/^JS:[*^~]?/, '').replace(/file:\/\/\S*dist\//, '')}\n`);
  for (const [leaf, n] of [...leaves].sort((a, b) => b[1] - a[1]).slice(0, 3))
    process.stdout.write(`${' '.repeat(10)}${cost(n)}  ${leaf}\n`);
}
