// The default ranker: BM25+ (minisearch) over a tool's name, title, description, parameters and
// upstream, fields boosted by how much they say about what the tool does; prefix matching for
// partial words and a little fuzziness for typos, only on longer terms (short ones would match
// everything).
import MiniSearch, { type SearchOptions } from 'minisearch';
import type { RankerFactory, SearchableTool, ToolRanker } from './ranker.js';
import { term, tokenize } from './terms.js';

/** A tool as the index holds it: one string per field, its id its place in the list. */
export interface Doc {
  id: number;
  name: string;
  title: string;
  description: string;
  params: string;
  upstream: string;
}

export const FIELDS = ['name', 'title', 'description', 'params', 'upstream'] as const;

/** The ranking's numbers, as data: the search thread (search-thread.ts) ranks by the same. */
export const RANK_SETTINGS = {
  boost: { name: 3, title: 2, description: 1, params: 0.6, upstream: 1.5 },
  /** Prefix matching on terms this long or longer. */
  prefixFrom: 4,
  /** A little fuzziness (this share of a term's letters, at most maxFuzzy) on terms this long or longer. */
  fuzzyFrom: 6,
  fuzziness: 0.2,
  maxFuzzy: 2,
};

export type RankSettings = typeof RANK_SETTINGS;

/**
 * minisearch's search options from the settings. Self-contained (it uses nothing but its
 * argument): the search thread runs it from its source text.
 */
export function searchOptions(s: RankSettings): SearchOptions {
  return {
    boost: s.boost,
    combineWith: 'OR',
    prefix: (t: string) => t.length >= s.prefixFrom,
    fuzzy: (t: string) => (t.length >= s.fuzzyFrom ? s.fuzziness : false),
    maxFuzzy: s.maxFuzzy,
  };
}

/**
 * Documents indexed per event-loop turn. Indexing is synchronous work: 50,000 tools in one go
 * held the loop for seconds (every session's requests waited); in chunks, no turn holds it for
 * more than a few milliseconds.
 */
export const CHUNK = 500;

export const bm25Ranker: RankerFactory = async (tools) => {
  const ranker = new Bm25Ranker(tools);
  await ranker.indexed;
  return ranker;
};

export class Bm25Ranker implements ToolRanker {
  readonly #names: readonly string[];
  readonly #index: MiniSearch<Doc>;
  /** Settles once every tool is indexed (a search before then sees only part of them). */
  readonly indexed: Promise<void>;

  constructor(tools: readonly SearchableTool[]) {
    this.#names = tools.map((t) => t.name);
    this.#index = new MiniSearch<Doc>({
      fields: [...FIELDS],
      storeFields: [],
      tokenize,
      processTerm: term,
      searchOptions: searchOptions(RANK_SETTINGS),
    });
    this.indexed = this.#index.addAllAsync(
      tools.map((t, id) => doc(t, id)),
      { chunkSize: CHUNK },
    );
  }

  async search(query: string, limit: number): Promise<readonly string[]> {
    return this.#index
      .search(query)
      .slice(0, limit)
      .map((r) => this.#names[r.id as number]!);
  }
}

export function doc(t: SearchableTool, id: number): Doc {
  return {
    id,
    name: t.name,
    title: t.title,
    description: t.description,
    params: t.params.map((p) => `${p.name} ${p.description}`).join(' '),
    upstream: t.upstream,
  };
}
