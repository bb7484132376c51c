#!/usr/bin/env node
// @ts-check
// Summarises a V8 .cpuprofile (node --cpu-prof): self time aggregated by function name + source
// location, and by package/area, top N first.
//
//   node load/tools/profile-summary.mjs <file.cpuprofile | dir> [--top 15] [--skip S] [--until U] [--no-line] [--json]
//
// --skip S leaves out the first S seconds of the profile (process start-up: module loading),
// --until U everything after U seconds (shutdown); bench prints the window of its measured run.
// A directory means its newest .cpuprofile. Self time of a sample is the time until the next
// sample (timeDeltas[i + 1]), as Chrome DevTools counts it. "(idle)" is time the event loop
// waited; percentages are given both of all samples and of non-idle time.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @typedef {{ functionName: string, url: string, lineNumber: number, columnNumber: number }} CallFrame
 * @typedef {{ id: number, callFrame: CallFrame, children?: number[] }} ProfileNode
 * @typedef {{ nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }} Profile
 */

/** @param {string} p */
function pickFile(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return p;
  const files = readdirSync(p)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => ({ f: join(p, f), t: statSync(join(p, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  if (files.length === 0) throw new Error(`no .cpuprofile in ${p}`);
  return /** @type {{ f: string }} */ (files[0]).f;
}

const cwd = process.cwd();

/** A short, readable location: node:internal…, <pkg>/file, or a path relative to the cwd. */
/** @param {string} url */
function shortUrl(url) {
  if (!url) return '';
  let path = url;
  if (url.startsWith('file://')) {
    try {
      path = fileURLToPath(url);
    } catch {
      path = url;
    }
  }
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) return path.slice(nm + '/node_modules/'.length);
  if (path.startsWith('/')) return relative(cwd, path);
  return path;
}

/** The package or area a location belongs to. @param {string} url @param {string} name */
function area(url, name) {
  if (!url) return name.startsWith('(') ? name : '(native/V8)';
  if (url.startsWith('node:')) return 'node core';
  const short = shortUrl(url);
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? short);
  }
  const dist = short.indexOf('dist/');
  if (dist !== -1)
    return `gateway ${
      short
        .slice(dist + 5)
        .split('/')
        .slice(0, -1)
        .join('/') || '.'
    }`;
  return short;
}

/**
 * @param {Profile} profile
 * @param {{ withLine: boolean, skipS?: number, untilS?: number }} o
 */
export function summarise(profile, { withLine, skipS = 0, untilS = Infinity }) {
  /** @type {Map<number, ProfileNode>} */
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  let at = profile.startTime;
  const from = profile.startTime + skipS * 1e6;
  const to = Math.min(profile.endTime, profile.startTime + untilS * 1e6);
  let counted = 0;
  /** @type {Map<number, number>} */
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  /** @param {ProfileNode} node */
  const keyOf = (node) => {
    const cf = node.callFrame;
    const where = cf.url ? `${shortUrl(cf.url)}${withLine && cf.lineNumber >= 0 ? `:${cf.lineNumber + 1}` : ''}` : '';
    return { name: cf.functionName || '(anonymous)', where, key: `${cf.functionName || '(anonymous)'}\u0000${where}` };
  };
  // Inclusive time: a sample counts once for every distinct function on its stack.
  /** @type {Map<string, { name: string, where: string, us: number }>} */
  const inclusive = new Map();
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    counted++;
    const dt = i + 1 < timeDeltas.length ? (timeDeltas[i + 1] ?? 0) : 0;
    const id = /** @type {number} */ (samples[i]);
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
    const seen = new Set();
    for (let n = id; n !== undefined; n = /** @type {number} */ (parentOf.get(n))) {
      const node = byId.get(n);
      if (!node) break;
      const k = keyOf(node);
      if (seen.has(k.key) || k.name === '(root)') continue;
      seen.add(k.key);
      const e = inclusive.get(k.key) ?? { name: k.name, where: k.where, us: 0 };
      e.us += Math.max(0, dt);
      inclusive.set(k.key, e);
    }
  }
  /** @type {Map<string, { name: string, where: string, us: number }>} */
  const byFn = new Map();
  /** @type {Map<string, number>} */
  const byArea = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const cf = node.callFrame;
    const name = cf.functionName || '(anonymous)';
    const where = cf.url ? `${shortUrl(cf.url)}${withLine && cf.lineNumber >= 0 ? `:${cf.lineNumber + 1}` : ''}` : '';
    const key = `${name}\u0000${where}`;
    const entry = byFn.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    byFn.set(key, entry);
    const a = area(cf.url, name);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
    total += us;
    if (name === '(idle)') idle += us;
  }
  return {
    totalMs: total / 1000,
    idleMs: idle / 1000,
    wallMs: (to - Math.max(profile.startTime, from)) / 1000,
    samples: counted,
    functions: [...byFn.values()].sort((a, b) => b.us - a.us).map((f) => ({ ...f, ms: f.us / 1000 })),
    inclusive: [...inclusive.values()].sort((a, b) => b.us - a.us).map((f) => ({ ...f, ms: f.us / 1000 })),
    areas: [...byArea.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000 })),
  };
}

function main() {
  const args = process.argv.slice(2);
  const topIdx = args.indexOf('--top');
  const top = topIdx !== -1 ? Number(args[topIdx + 1]) : 15;
  const withLine = !args.includes('--no-line');
  const asJson = args.includes('--json');
  const skipIdx = args.indexOf('--skip');
  const skipS = skipIdx !== -1 ? Number(args[skipIdx + 1]) : 0;
  const untilIdx = args.indexOf('--until');
  const untilS = untilIdx !== -1 ? Number(args[untilIdx + 1]) : Infinity;
  const valueAt = new Set([topIdx + 1, skipIdx + 1, untilIdx + 1].filter((i) => i > 0));
  const target = args.find((a, i) => !a.startsWith('--') && !valueAt.has(i));
  if (!target) {
    process.stderr.write(
      'usage: node load/tools/profile-summary.mjs <file.cpuprofile | dir> [--top 15] [--skip S] [--until U] [--no-line] [--json]\n',
    );
    return 2;
  }
  const file = pickFile(resolve(target));
  /** @type {Profile} */
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const s = summarise(profile, { withLine, skipS, untilS });
  if (asJson) {
    process.stdout.write(`${JSON.stringify({ file, ...s, functions: s.functions.slice(0, top) }, null, 2)}\n`);
    return 0;
  }
  const busy = s.totalMs - s.idleMs;
  const pct = (/** @type {number} */ ms) => `${((ms / s.totalMs) * 100).toFixed(1).padStart(5)}%`;
  const pctBusy = (/** @type {number} */ ms) => `${((ms / busy) * 100).toFixed(1).padStart(5)}%`;
  const out = [];
  const shown = relative(cwd, file).startsWith('..') ? file : relative(cwd, file);
  out.push(
    `${shown}: ${s.samples} samples over ${(s.wallMs / 1000).toFixed(1)} s${skipS || untilS !== Infinity ? ` (window ${skipS}–${untilS === Infinity ? 'end' : untilS} s)` : ''}; ` +
      `sampled ${(s.totalMs / 1000).toFixed(2)} s, idle ${(s.idleMs / 1000).toFixed(2)} s, busy ${(busy / 1000).toFixed(2)} s`,
  );
  out.push('');
  out.push(`Top ${top} functions by self time (% of all samples, % of busy time):`);
  out.push(`${'self ms'.padStart(9)}  ${'all'.padStart(6)}  ${'busy'.padStart(6)}  function  location`);
  for (const f of s.functions.slice(0, top)) {
    out.push(
      `${f.ms.toFixed(1).padStart(9)}  ${pct(f.ms)}  ${f.name === '(idle)' ? '     —' : pctBusy(f.ms)}  ${f.name}  ${f.where}`,
    );
  }
  out.push('');
  out.push(`Top ${top * 2} functions by inclusive time (self + callees; % of busy time):`);
  for (const f of s.inclusive.filter((f) => f.name !== '(idle)').slice(0, top * 2)) {
    out.push(`${f.ms.toFixed(1).padStart(9)}  ${pctBusy(f.ms)}  ${f.name}  ${f.where}`);
  }
  out.push('');
  out.push('Self time by area:');
  for (const a of s.areas.slice(0, 12)) {
    out.push(
      `${a.ms.toFixed(1).padStart(9)}  ${pct(a.ms)}  ${a.name === '(idle)' ? '     —' : pctBusy(a.ms)}  ${a.name}`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
