/**
 * The search thread (tool-search/search-thread.ts): the same ranking as the in-process ranker,
 * ties and order included, over the real catalog of load/tool-search with synthetic tools that
 * tie by the hundred, for the tuned and the held-out queries and bad ones; and a search there
 * leaves the event loop free (in process, it is over before any other task runs).
 */
import { describe, expect, it } from 'vitest';
import { bm25Ranker } from '../../src/tool-search/bm25-ranker.js';
import type { ToolRanker } from '../../src/tool-search/ranker.js';
import { THREAD_FROM_TOOLS, sharedToolRanker, threadRanker } from '../../src/tool-search/search-thread.js';
import { QUERIES, REAL_TOOLS, rankings, syntheticTools } from '../support/search-tools.js';

describe('the search thread', () => {
  it('ranks as the in-process ranker does, ties and their order included, at every limit', async () => {
    const tools = [...REAL_TOOLS, ...syntheticTools(2500)];
    const [inProcess, onThread] = await Promise.all([bm25Ranker(tools), threadRanker(tools)]);
    // Whole rankings (every match), and the first 10 as search_tools asks.
    for (const limit of [tools.length, 10]) {
      const expected = await rankings(inProcess, limit);
      expect(expected.filter((r) => r.length > 0).length).toBeGreaterThan(QUERIES.length * 0.9);
      expect(await rankings(onThread, limit)).toEqual(expected);
    }
  });

  it('serves several indexes at once, each its own list', async () => {
    const a = await threadRanker(REAL_TOOLS);
    const b = await threadRanker(syntheticTools(300));
    const [fromA, fromB] = await Promise.all([a.search('create an issue', 3), b.search('create an issue', 3)]);
    expect(fromA).toEqual(await (await bm25Ranker(REAL_TOOLS)).search('create an issue', 3));
    expect(fromB.every((n) => n.startsWith('area'))).toBe(true);
    expect(await (await threadRanker([])).search('anything', 5)).toEqual([]);
  });

  it('a search on the thread leaves the event loop free; in process it holds it to the end', async () => {
    const tools = [...REAL_TOOLS, ...syntheticTools(THREAD_FROM_TOOLS)];
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
    expect(await settledInMicrotasks(await sharedToolRanker(undefined)(tools))).toBe(false);
  });
});
