/**
 * Tool lists for the ranker tests: the real catalog of load/tool-search (103 tools of 14 public
 * MCP servers), synthetic tools that tie by the hundred, the tuned and held-out queries with odd
 * ones, and a ranker's whole answer to all of them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { searchable, type SearchableTool, type ToolRanker } from '../../src/tool-search/ranker.js';
import { ROOT } from './gateway.js';

const DATA = resolve(ROOT, 'load/tool-search');
const read = (file: string) => JSON.parse(readFileSync(resolve(DATA, file), 'utf8'));

interface Server {
  name: string;
  tools: Array<Record<string, unknown>>;
}

export const REAL_TOOLS: SearchableTool[] = (read('catalog.json').servers as Server[]).flatMap((s) =>
  s.tools.map((t) => searchable({ ...t, name: `${s.name}__${t.name}` }, s.name)),
);

export const QUERIES: string[] = [...read('queries.json').queries, ...read('heldout.json').queries].map(
  (q: { query: string }) => q.query,
);

/** `n` tools over a few words: many score alike, so the order among ties is checked too. */
export function syntheticTools(n: number): SearchableTool[] {
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

/** `ranker`'s answer to every query, odd ones included, at most `limit` names each. */
export async function rankings(ranker: ToolRanker, limit: number): Promise<Array<readonly string[]>> {
  const out: Array<readonly string[]> = [];
  for (const q of [...QUERIES, ...ODD]) out.push(await ranker.search(q, limit));
  return out;
}
