// Large tool indexes, ranked on a thread of their own. A search is synchronous work in
// proportion to the postings its terms reach: at 50,000 tools one held the event loop for
// hundreds of milliseconds, and every session's requests waited. On this thread it holds none:
// the loop only tokenizes the query and reads the answer. Same minisearch, same options, the
// same tokens and terms in the same order: the same ranking as the in-process ranker's
// (bm25-ranker.ts), ties included. One thread per process, started by the first large index and
// ended when none is left; an index goes when its ranker is collected (its catalog version gone).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { CHUNK, FIELDS, RANK_SETTINGS, bm25Ranker, doc, searchOptions } from './bm25-ranker.js';
import type { RankerFactory, SearchableTool, ToolRanker } from './ranker.js';
import { term, tokenize } from './terms.js';
import { threadProgram, type FromThread, type TermPair, type ThreadData, type ToThread } from './thread-program.js';

/**
 * From this many tools an index is built and searched on the thread. Below it a search takes
 * about a millisecond in process, about what the round trip to the thread would add.
 */
export const THREAD_FROM_TOOLS = 2000;

const SOURCE = `(${threadProgram.toString()})(require, ${searchOptions.toString()})`;

/** The default ranker: in process for small lists, on the search thread for large ones. */
export const toolRanker: RankerFactory = (tools) =>
  tools.length >= THREAD_FROM_TOOLS ? threadRanker(tools) : bm25Ranker(tools);

/** BM25 on the search thread, whatever the list's size. */
export const threadRanker: RankerFactory = (tools) => searchThread.build(tools);

interface Pending {
  resolve(ids: number[]): void;
  reject(err: Error): void;
}

class SearchThread {
  #thread: Worker | undefined;
  readonly #calls = new Map<number, Pending>();
  #nextCall = 1;
  #nextIndex = 1;
  /** Indexes built or being built on the current thread. */
  #live = 0;
  readonly #collected = new FinalizationRegistry<{ index: number; thread: Worker }>((held) => this.#drop(held));

  async build(tools: readonly SearchableTool[]): Promise<ToolRanker> {
    const thread = this.#running();
    const index = this.#nextIndex++;
    this.#live++;
    try {
      const sent = new Set<string>();
      for (let from = 0; from < tools.length; from += CHUNK) {
        // The tokenizing and the copy to the thread are the loop's work: a chunk per turn.
        if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.#thread !== thread) throw new Error('the search thread stopped');
        const docs = tools.slice(from, from + CHUNK).map((t, i) => tokenized(doc(t, from + i), sent));
        thread.postMessage({ op: 'add', index, docs: docs.map((d) => d.doc), terms: docs.flatMap((d) => d.terms) });
      }
      await this.#call(thread, (call) => ({ op: 'built', index, call }));
    } catch (err) {
      this.#drop({ index, thread });
      throw err;
    }
    const names = tools.map((t) => t.name);
    const ranker: ToolRanker = {
      search: async (query, limit) => {
        const tokens = tokenize(query);
        const terms = tokens.map((t): TermPair => [t, term(t)]);
        const ids = await this.#call(thread, (call) => ({ op: 'search', index, call, tokens, terms, limit }));
        return ids.map((id) => names[id]!);
      },
    };
    this.#collected.register(ranker, { index, thread });
    return ranker;
  }

  /** The thread, started on first use; it never keeps the process alive. */
  #running(): Worker {
    if (this.#thread) return this.#thread;
    const data: ThreadData = {
      minisearch: createRequire(import.meta.url).resolve('minisearch'),
      settings: RANK_SETTINGS,
    };
    const thread = new Worker(SOURCE, { eval: true, workerData: data });
    thread.unref();
    thread.on('message', (m: FromThread) => {
      const pending = this.#calls.get(m.call);
      if (!pending) return;
      this.#calls.delete(m.call);
      if ('error' in m) pending.reject(new Error(`search thread: ${m.error}`));
      else pending.resolve(m.ids);
    });
    const lost = (err: Error) => {
      if (this.#thread !== thread) return;
      this.#thread = undefined;
      this.#live = 0;
      for (const pending of this.#calls.values()) pending.reject(err);
      this.#calls.clear();
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`the search thread exited (${code})`)));
    this.#thread = thread;
    return thread;
  }

  /** A searching or building call on `thread`; fails at once if that thread is gone. */
  #call(thread: Worker, message: (call: number) => ToThread): Promise<number[]> {
    if (this.#thread !== thread) return Promise.reject(new Error('the search thread stopped'));
    const call = this.#nextCall++;
    return new Promise<number[]>((resolve, reject) => {
      this.#calls.set(call, { resolve, reject });
      thread.postMessage(message(call));
    });
  }

  /** An index no ranker needs any more; the thread ends with its last one. */
  #drop({ index, thread }: { index: number; thread: Worker }): void {
    if (this.#thread !== thread) return;
    thread.postMessage({ op: 'drop', index } satisfies ToThread);
    if (--this.#live > 0) return;
    this.#thread = undefined;
    void thread.terminate();
  }
}

const searchThread = new SearchThread();

/** A document as the thread takes it (each field's tokens), and the terms of its tokens not yet sent. */
function tokenized(d: ReturnType<typeof doc>, sent: Set<string>): { doc: ReturnType<typeof doc>; terms: TermPair[] } {
  const terms: TermPair[] = [];
  const out = { ...d };
  for (const field of FIELDS) {
    const tokens = tokenize(d[field]);
    for (const t of tokens)
      if (!sent.has(t)) {
        sent.add(t);
        terms.push([t, term(t)]);
      }
    out[field] = tokens.join(' ');
  }
  return { doc: out, terms };
}
