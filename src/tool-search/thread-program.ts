// What the search thread runs (search-thread.ts starts it) and the messages it takes and gives.
// The program is handed to the thread as source text (a worker of `eval: true`), so that it runs
// the same from dist/ and from the TypeScript sources under the tests: it uses nothing from
// outside its own body but its arguments. It never sees the gateway's terms code: each tool's
// fields come tokenized, with what each token becomes (terms.ts's `term`), so its index is the
// one the in-process ranker would build: the same tokens counted, the same terms kept. An index
// can also come whole, as another process's thread serialized it (`load`, `dump`: index-share.ts).
import type MiniSearchClass from 'minisearch';
import type { SearchOptions } from 'minisearch';
import type { Doc, RankSettings } from './bm25-ranker.js';

/** A token and the term it becomes (null: a stop word, left out). */
export type TermPair = [token: string, term: string | null];

/** A tool's fields as the thread indexes them: each field's tokens, joined by single spaces. */
export type ThreadDoc = Doc;

export type ToThread =
  /** More of an index's tools, in order, with the terms of the tokens not sent for it before. */
  | { op: 'add'; index: number; docs: ThreadDoc[]; terms: TermPair[] }
  /** Answered (`call`) once every `add` before it is indexed. */
  | { op: 'built'; index: number; call: number }
  /** The ids of the best `limit` matches of the query's tokens. */
  | { op: 'search'; index: number; call: number; tokens: string[]; terms: TermPair[]; limit: number }
  /** An index as `dump` gave it (here or in another process), of `count` tools; answered once loaded. */
  | { op: 'load'; index: number; call: number; text: string; count: number }
  /** Answered with the index serialized (minisearch's JSON). */
  | { op: 'dump'; index: number; call: number }
  | { op: 'drop'; index: number };

export type FromThread =
  { call: number; ids: number[] } | { call: number; text: string } | { call: number; error: string };

export interface ThreadData {
  /** minisearch's CommonJS entry, resolved by the gateway's own module (the thread has no module path of its own). */
  minisearch: string;
  settings: RankSettings;
}

/** The thread's program; `options` is bm25-ranker.ts's searchOptions, also passed as its source. */
export function threadProgram(require: NodeJS.Require, options: (s: RankSettings) => SearchOptions): void {
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const data = workerData as ThreadData;
  const MiniSearch = require(data.minisearch) as typeof MiniSearchClass;
  const split = (text: string) => (text === '' ? [] : text.split(' '));
  interface Entry {
    search: MiniSearchClass<ThreadDoc>;
    terms: Map<string, string | null>;
    /** Why an `add` failed: the build is answered with it. */
    failed?: string;
  }
  const indexes = new Map<number, Entry>();
  const optionsOf = (terms: Map<string, string | null>) => ({
    fields: ['name', 'title', 'description', 'params', 'upstream'],
    storeFields: [],
    tokenize: split,
    processTerm: (token: string) => terms.get(token) ?? null,
    searchOptions: options(data.settings),
  });
  const open = (index: number): Entry => {
    let entry = indexes.get(index);
    if (!entry) {
      const terms = new Map<string, string | null>();
      indexes.set(index, (entry = { search: new MiniSearch<ThreadDoc>(optionsOf(terms)), terms }));
    }
    return entry;
  };
  const existing = (index: number): Entry => {
    const entry = indexes.get(index);
    if (!entry) throw new Error(`no index ${index}`);
    return entry;
  };
  const port = parentPort!;
  port.on('message', (m: ToThread) => {
    try {
      if (m.op === 'add') {
        const entry = open(m.index);
        for (const [token, term] of m.terms) entry.terms.set(token, term);
        try {
          entry.search.addAll(m.docs);
        } catch (err) {
          entry.failed ??= String(err);
        }
      } else if (m.op === 'built') {
        const { failed } = open(m.index);
        port.postMessage(failed === undefined ? { call: m.call, ids: [] } : { call: m.call, error: failed });
      } else if (m.op === 'search') {
        const query = new Map(m.terms);
        const found = existing(m.index).search.search('', {
          tokenize: () => m.tokens,
          processTerm: (t) => query.get(t) ?? null,
        });
        port.postMessage({ call: m.call, ids: found.slice(0, m.limit).map((r) => r.id as number) });
      } else if (m.op === 'load') {
        // A loaded index's terms are already made: a search brings its own (the query's).
        const terms = new Map<string, string | null>();
        const search = MiniSearch.loadJSON<ThreadDoc>(m.text, optionsOf(terms));
        if (search.documentCount !== m.count) throw new Error(`${search.documentCount} tools, not ${m.count}`);
        indexes.set(m.index, { search, terms });
        port.postMessage({ call: m.call, ids: [] });
      } else if (m.op === 'dump') {
        port.postMessage({ call: m.call, text: JSON.stringify(existing(m.index).search) });
      } else {
        indexes.delete(m.index);
      }
    } catch (err) {
      if ('call' in m) port.postMessage({ call: m.call, error: String(err) });
    }
  });
}
