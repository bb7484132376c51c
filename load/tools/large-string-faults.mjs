#!/usr/bin/env node
// @ts-check
// Where a large message's time goes on this machine. Each step the gateway takes with one (parse it,
// decode it from bytes, flatten the text JSON.stringify built in parts before its first slice is
// written) makes a new string of its size, and V8 puts a string that large on pages of its own, fresh
// from the kernel: each 4 KiB page is a minor page fault when first written. This times each step and
// counts its faults (process.resourceUsage().minorPageFault), median of 9, beside a Buffer of the same
// size from the allocator. In process; no network, no child process.
//
//   node load/tools/large-string-faults.mjs [MiB]     (default 3.5, the hostile mix's large calls)
const MiB = 1024 * 1024;
const size = Math.round(Number(process.argv[2] ?? 3.5) * MiB);
const ROUNDS = 9;

const text = 'x'.repeat(size);
const message = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } };
const json = JSON.stringify(message);
const utf8 = Buffer.from(json);
/** The line as a stdio server's pipe delivers it: 64 KiB chunks. */
const chunks = [];
for (let at = 0; at < utf8.length; at += 64 * 1024) chunks.push(Buffer.from(utf8.subarray(at, at + 64 * 1024)));

/** @type {Record<string, () => unknown>} */
const steps = {
  'JSON.parse of a line joined from 64 KiB chunks': () => JSON.parse(chunks.map((c) => c.toString()).join('')),
  'JSON.parse of a flat string': () => JSON.parse(json),
  'decode the UTF-8 bytes to a string': () => utf8.toString('utf8'),
  'JSON.stringify alone': () => JSON.stringify(message),
  'JSON.stringify, then its first slice': () => (JSON.stringify(message) + '\n').slice(0, 128 * 1024),
  'Buffer.from of the large string': () => Buffer.from(text),
  'Buffer.allocUnsafe of the same size': () => Buffer.allocUnsafe(size),
};

/** @param {() => unknown} fn */
function measure(fn) {
  const times = [];
  const faults = [];
  for (let i = 0; i < ROUNDS; i++) {
    const before = process.resourceUsage().minorPageFault;
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    faults.push(process.resourceUsage().minorPageFault - before);
  }
  const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: median(times), faults: median(faults) };
}

process.stdout.write(`${(size / MiB).toFixed(1)} MiB, median of ${ROUNDS}, Node ${process.version}\n\n`);
process.stdout.write('| step | ms | minor faults |\n|---|--:|--:|\n');
for (const [name, fn] of Object.entries(steps)) {
  const { ms, faults } = measure(fn);
  process.stdout.write(`| ${name} | ${ms.toFixed(2)} | ${faults} |\n`);
}
