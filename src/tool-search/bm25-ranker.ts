// The default ranker: BM25+ (minisearch) over a tool's name, title, description, parameters and
// upstream, fields boosted by how much they say about what the tool does; prefix matching for
// partial words and a little fuzziness for typos, only on longer terms (short ones would match
// everything).
import MiniSearch from 'minisearch';
import type { RankerFactory, SearchableTool, ToolRanker } from './ranker.js';
import { term, tokenize } from './terms.js';

interface Doc {
  id: number;
  name: string;
  title: string;
  description: string;
  params: string;
  upstream: string;
}

const BOOST = { name: 3, title: 2, description: 1, params: 0.6, upstream: 1.5 };

/**
 * Documents indexed per event-loop turn. Indexing is synchronous work: 50,000 tools in one go
 * held the loop for seconds (every session's requests waited); in chunks, no turn holds it for
 * more than a few milliseconds.
 */
const CHUNK = 500;

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
      fields: ['name', 'title', 'description', 'params', 'upstream'],
      storeFields: [],
      tokenize,
      processTerm: term,
      searchOptions: {
        boost: BOOST,
        combineWith: 'OR',
        prefix: (t) => t.length >= 4,
        fuzzy: (t) => (t.length >= 6 ? 0.2 : false),
        maxFuzzy: 2,
      },
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

function doc(t: SearchableTool, id: number): Doc {
  return {
    id,
    name: t.name,
    title: t.title,
    description: t.description,
    params: t.params.map((p) => `${p.name} ${p.description}`).join(' '),
    upstream: t.upstream,
  };
}
