// Search quality of the gateway's ranker (tool-search/bm25-ranker.ts) over catalog.json (real
// public MCP servers' tool lists, captured by capture.mjs) and queries.json (natural-language
// tasks, each with the tools that answer it): recall@1, recall@5 and MRR, on the real catalog
// alone and with synthetic distractors mixed in, and the same for the design sets' queries
// (design*.json: what changes of terms.ts are judged on) and the held-out sets' (heldout*.json: never
// tuned against, their misses not printed); and the bytes of tools/list with search on against off.
// `--cost` adds index build time, memory, search p99 and the longest event-loop holds at 5,000
// and 50,000 tools, in process and on the search thread, and what sharing a built index between
// processes would cost (serialize, bytes, load) against building it again.
// Needs `npm run build` first (it imports dist/).
//
//   node load/tool-search/quality.mjs [--distractors 5000] [--cost]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import MiniSearch from 'minisearch';
import { FIELDS, RANK_SETTINGS, bm25Ranker, doc, searchOptions } from '../../dist/tool-search/bm25-ranker.js';
import { term, tokenize } from '../../dist/tool-search/terms.js';
import { threadRanker } from '../../dist/tool-search/search-thread.js';
import { searchable } from '../../dist/tool-search/ranker.js';
import { gatewayTools, searchDescription } from '../../dist/gateway/tool-search-tools.js';

const here = import.meta.dirname;
const args = process.argv.slice(2);
const distractors = Number(args[args.indexOf('--distractors') + 1] || 5000) || 5000;
const catalog = JSON.parse(readFileSync(join(here, 'catalog.json'), 'utf8'));
/**
 * The query sets, in report order: the tuned set, the two design sets (what ranker changes are
 * judged on), and the held-out sets (never tuned against: they only report).
 */
const SETS = [
  'queries.json',
  'design.json',
  'design-2.json',
  'design-3.json',
  'heldout.json',
  'heldout-2.json',
  'heldout-3.json',
  'heldout-4.json',
];
const sets = SETS.map((file) => ({ file, queries: JSON.parse(readFileSync(join(here, file), 'utf8')).queries }));
const queries = sets[0].queries;

/** The catalog as the gateway exposes it: `<server>__<tool>`, the upstream named. */
const real = catalog.servers.flatMap((s) =>
  s.tools.map((t) => ({ entry: { ...t, name: `${s.name}__${t.name}` }, upstream: s.name })),
);

/** Deterministic distractors in the same vocabulary as the real tools, so they compete. */
function synthetic(n) {
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const verbs = ['get', 'list', 'create', 'update', 'delete', 'search', 'send', 'read', 'write', 'sync', 'export'];
  const nouns = [
    'file',
    'issue',
    'message',
    'channel',
    'user',
    'record',
    'invoice',
    'ticket',
    'repository',
    'report',
    'image',
    'page',
    'query',
    'event',
    'contact',
    'order',
    'branch',
    'comment',
    'key',
    'place',
  ];
  const areas = ['crm', 'billing', 'hr', 'wiki', 'calendar', 'storage', 'analytics', 'inventory', 'support', 'ads'];
  return Array.from({ length: n }, (_, i) => {
    const [v, o, a] = [pick(verbs), pick(nouns), pick(areas)];
    const upstream = `${a}${i % 97}`;
    return {
      entry: {
        name: `${upstream}__${v}_${o}`,
        description: `${v[0].toUpperCase()}${v.slice(1)} a ${o} in the ${a} system. Returns the ${o} as JSON.`,
        inputSchema: { type: 'object', properties: { id: { type: 'string', description: `The ${o} id` } } },
      },
      upstream,
    };
  });
}

async function quality(tools, set = queries) {
  const ranker = await bm25Ranker(tools.map((t) => searchable(t.entry, t.upstream)));
  let r1 = 0,
    r5 = 0,
    mrr = 0;
  const misses = [];
  for (const { query, expected } of set) {
    const ranked = await ranker.search(query, 10);
    const rank = ranked.findIndex((n) => expected.includes(n));
    if (rank === 0) r1++;
    if (rank >= 0 && rank < 5) r5++;
    else misses.push(`${query} -> ${ranked.slice(0, 3).join(', ') || '(nothing)'}`);
    if (rank >= 0) mrr += 1 / (rank + 1);
  }
  const n = set.length;
  return { tools: tools.length, recall1: r1 / n, recall5: r5 / n, mrr: mrr / n, misses };
}

const listBytes = (tools) => Buffer.byteLength(JSON.stringify({ tools: tools.map((t) => t.entry) }));
function searchOnBytes(tools) {
  const upstreams = [...new Set(tools.map((t) => t.upstream))].sort();
  const config = { enabled: true, pinned: [], maxResults: 10 };
  return Buffer.byteLength(
    JSON.stringify({ tools: gatewayTools(searchDescription(tools.length, upstreams, config), config) }),
  );
}

const mixed = [...real, ...synthetic(distractors)];
const rows = [];
for (const set of sets)
  for (const [catalogLabel, tools] of [
    ['real', real],
    [`real + ${distractors} distractors`, mixed],
  ])
    rows.push({ set: set.file, catalogLabel, ...(await quality(tools, set.queries)) });
const f = (x) => x.toFixed(3);
console.log(
  `queries: ${sets.map((s) => `${s.file} ${s.queries.length}`).join(', ')}; ` +
    `real catalog: ${real.length} tools from ${catalog.servers.length} servers`,
);
console.log('| queries | catalog | tools | recall@1 | recall@5 | MRR |\n|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.set} | ${r.catalogLabel} | ${r.tools} | ${f(r.recall1)} | ${f(r.recall5)} | ${f(r.mrr)} |`);
console.log('\n| catalog | tools/list bytes, search off | search on (nothing pinned) |\n|---|---|---|');
console.log(`| real | ${listBytes(real)} | ${searchOnBytes(real)} |`);
console.log(
  `| ${distractors} synthetic | ${listBytes(synthetic(distractors))} | ${searchOnBytes(synthetic(distractors))} |`,
);
// The held-out sets' misses are not printed: reading them is how a set stops being held out.
for (const r of rows)
  if (r.misses.length && !r.set.startsWith('heldout'))
    console.log(`\nmissed in top 5 (${r.set}, ${r.catalogLabel}):\n  ${r.misses.join('\n  ')}`);

if (args.includes('--cost')) {
  // What splitting text into tokens costs alone (terms.ts's tokenize, both sides of every search):
  // the real catalog's indexed fields, 200 times over, the best of three.
  const fields = real.flatMap((t) => Object.values(doc(searchable(t.entry, t.upstream), 0)).slice(1));
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) for (const text of fields) tokenize(text);
    best = Math.min(best, performance.now() - t0);
  }
  console.log(`cost tokenize: ${fields.length} fields x 200 in ${best.toFixed(0)} ms`);
}

if (args.includes('--cost')) {
  // In process (bm25Ranker) and on the search thread (threadRanker, what the gateway uses from
  // THREAD_FROM_TOOLS on): build time, the longest event-loop hold while building and while
  // searching (what every other request waits), heap, and search p99 as the caller sees it.
  for (const n of [5000, 50000])
    for (const [where, factory] of [
      ['in process', bm25Ranker],
      ['search thread', threadRanker],
    ]) {
      const tools = [...real, ...synthetic(n - real.length)].map((t) => searchable(t.entry, t.upstream));
      const heap = process.memoryUsage().heapUsed;
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const t0 = performance.now();
      const ranker = await factory(tools);
      const build = performance.now() - t0;
      delay.disable();
      const mem = process.memoryUsage().heapUsed - heap;
      const searching = monitorEventLoopDelay({ resolution: 5 });
      searching.enable();
      const times = [];
      for (let i = 0; i < 5; i++)
        for (const { query } of queries) {
          const s = performance.now();
          await ranker.search(query, 10);
          times.push(performance.now() - s);
          // A turn between searches, as between requests: the monitor sees each search's own hold.
          await new Promise((r) => setImmediate(r));
        }
      searching.disable();
      times.sort((a, b) => a - b);
      const p99 = times[Math.floor(times.length * 0.99)];
      console.log(
        `cost ${n} tools, ${where}: build ${build.toFixed(0)} ms (longest loop hold ${(delay.max / 1e6).toFixed(0)} ms), ` +
          `heap +${(mem / 2 ** 20).toFixed(1)} MiB (this thread's), search p99 ${p99.toFixed(2)} ms ` +
          `(longest loop hold while searching ${(searching.max / 1e6).toFixed(0)} ms)`,
      );
    }
}

if (args.includes('--cost')) {
  // Would an index built once be worth sharing between processes (through Redis, say) instead of
  // each process building its own? Only if loading one is much cheaper than building it: the
  // index as minisearch serializes it, timed against the build it would replace.
  const options = {
    fields: [...FIELDS],
    storeFields: [],
    tokenize,
    processTerm: term,
    searchOptions: searchOptions(RANK_SETTINGS),
  };
  for (const n of [5000, 50000]) {
    const docs = [...real, ...synthetic(n - real.length)].map((t, id) => doc(searchable(t.entry, t.upstream), id));
    let t0 = performance.now();
    const built = new MiniSearch(options);
    built.addAll(docs);
    const build = performance.now() - t0;
    t0 = performance.now();
    const json = JSON.stringify(built);
    const serialize = performance.now() - t0;
    t0 = performance.now();
    const loaded = MiniSearch.loadJSON(json, options);
    const load = performance.now() - t0;
    const ids = (index) =>
      queries.map(({ query }) =>
        index
          .search(query)
          .slice(0, 10)
          .map((r) => r.id)
          .join(),
      );
    const same = ids(built).join('|') === ids(loaded).join('|');
    console.log(
      `share ${n} tools, in process: build ${build.toFixed(0)} ms; serialize ${serialize.toFixed(0)} ms, ` +
        `${(Buffer.byteLength(json) / 2 ** 20).toFixed(1)} MiB; load ${load.toFixed(0)} ms ` +
        `(${(load / build).toFixed(2)}x the build); same rankings: ${same}`,
    );
  }
}
