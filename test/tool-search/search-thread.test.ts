/**
 * The search thread (tool-search/search-thread.ts): the same ranking as the in-process ranker,
 * ties and order included, over the real catalog of load/tool-search with synthetic tools that
 * tie by the hundred, for the tuned and the held-out queries and bad ones; and a search there
 * leaves the event loop free (in process, it is over before any other task runs).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bm25Ranker } from '../../src/tool-search/bm25-ranker.js';
import { searchable, type SearchableTool, type ToolRanker } from '../../src/tool-search/ranker.js';
import { THREAD_FROM_TOOLS, threadRanker, toolRanker } from '../../src/tool-search/search-thread.js';
import { ROOT } from '../support/gateway.js';

const DATA = resolve(ROOT, 'load/tool-search');
const read = (file: string) => JSON.parse(readFileSync(resolve(DATA, file), 'utf8'));

interface Server {
  name: string;
  tools: Array<Record<string, unknown>>;
}
const REAL: SearchableTool[] = (read('catalog.json').servers as Server[]).flatMap((s) =>
  s.tools.map((t) => searchable({ ...t, name: `${s.name}__${t.name}` }, s.name)),
);
const QUERIES: string[] = [...read('queries.json').queries, ...read('heldout.json').queries].map(
  (q: { query: string }) => q.query,
);

/** `n` tools over a few words: many score alike, so the order among ties is checked too. */
function synthetic(n: number): SearchableTool[] {
  const verbs = ['get', 'list', 'create', 'delete', 'search', 'send'];
  const nouns = ['file', 'issue', 'message', 'user', 'invoice', 'repository', 'image'];
  return Array.from({ length: n }, (_, i) => {
    const [verb, noun, area] = [verbs[i % 6]!, nouns[(i >> 1) % 7]!, `area${i % 13}`];
    return searchable(
      {
        name: `${area}__${verb}_${noun}`,
        description: `${verb} a ${noun} in ${area}. Returns the ${noun}s found.`,
        inputSchema: { type: 'object', properties: { id: { type: 'string', description: `The ${noun} id` } } },
      },
      area,
    );
  });
}

const ODD = [
  '',
  '   ',
  'the a of',
  'x'.repeat(1000),
  'ünïcödé façade',
  '日本語 ファイル',
  'ReadFile readFILE',
  'a_b-c.d',
];

async function rankings(ranker: ToolRanker, limit: number): Promise<Array<readonly string[]>> {
  const out: Array<readonly string[]> = [];
  for (const q of [...QUERIES, ...ODD]) out.push(await ranker.search(q, limit));
  return out;
}

describe('the search thread', () => {
  it('ranks as the in-process ranker does, ties and their order included, at every limit', async () => {
    const tools = [...REAL, ...synthetic(2500)];
    const [inProcess, onThread] = await Promise.all([bm25Ranker(tools), threadRanker(tools)]);
    // Whole rankings (every match), and the first 10 as search_tools asks.
    for (const limit of [tools.length, 10]) {
      const expected = await rankings(inProcess, limit);
      expect(expected.filter((r) => r.length > 0).length).toBeGreaterThan(QUERIES.length * 0.9);
      expect(await rankings(onThread, limit)).toEqual(expected);
    }
  });

  it('serves several indexes at once, each its own list', async () => {
    const a = await threadRanker(REAL);
    const b = await threadRanker(synthetic(300));
    const [fromA, fromB] = await Promise.all([a.search('create an issue', 3), b.search('create an issue', 3)]);
    expect(fromA).toEqual(await (await bm25Ranker(REAL)).search('create an issue', 3));
    expect(fromB.every((n) => n.startsWith('area'))).toBe(true);
    expect(await (await threadRanker([])).search('anything', 5)).toEqual([]);
  });

  it('a search on the thread leaves the event loop free; in process it holds it to the end', async () => {
    const tools = [...REAL, ...synthetic(THREAD_FROM_TOOLS)];
    // Deterministic, not a count of turns: an answer from the thread arrives as a message, a macrotask,
    // so the search cannot have settled once only microtasks have run. In process it has.
    const settledInMicrotasks = async (ranker: ToolRanker) => {
      let settled = false;
      const search = ranker.search('list the files of a repository and send a message', 10).then((names) => {
        settled = true;
        return names;
      });
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const early = settled;
      expect((await search).length).toBe(10);
      return early;
    };
    expect(await settledInMicrotasks(await bm25Ranker(tools))).toBe(true);
    expect(await settledInMicrotasks(await toolRanker(tools))).toBe(false);
  });
});
