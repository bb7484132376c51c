// Large tool indexes, ranked on a thread of their own. A search is synchronous work in
// proportion to the postings its terms reach: at 50,000 tools one held the event loop for
// hundreds of milliseconds, and every session's requests waited. On this thread it holds none:
// the loop only tokenizes the query and reads the answer. Same minisearch, same options, the
// same tokens and terms in the same order: the same ranking as the in-process ranker's
// (bm25-ranker.ts), ties included. One thread per process, started by the first large index and
// ended when none is left; an index goes when its ranker is collected (its catalog version gone).
// Given an IndexShare (Redis), an index is loaded as another process kept it, or built and kept.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { CHUNK, FIELDS, RANK_SETTINGS, bm25Ranker, doc, searchOptions } from './bm25-ranker.js';
import type { IndexOrigin, RankerFactory, SearchableTool, ToolRanker } from './ranker.js';
import { indexKey, type IndexShare } from './index-share.js';
import { TERMS_FINGERPRINT, term, tokenize } from './terms.js';
import { threadProgram, type FromThread, type TermPair, type ThreadData, type ToThread } from './thread-program.js';

/**
 * From this many tools an index is built and searched on the thread. Below it a search takes
 * about a millisecond in process, about what the round trip to the thread would add.
 */
export const THREAD_FROM_TOOLS = 2000;

const SOURCE = `(${threadProgram.toString()})(require, ${searchOptions.toString()})`;

/**
 * What decides a thread index's terms and ranking: an index shared under another format (another
 * gateway build, term table or ranking) is never loaded, as its key differs (index-share.ts).
 */
const FORMAT = JSON.stringify([FIELDS, RANK_SETTINGS, TERMS_FINGERPRINT]);

/**
 * The default ranker: in process for small lists, on the search thread for large ones, whose
 * indexes are kept in `share` (if any) for the other processes, and loaded from it when kept.
 */
export function sharedToolRanker(share: IndexShare | undefined): RankerFactory {
  return (tools) => (tools.length >= THREAD_FROM_TOOLS ? searchThread.build(tools, share) : bm25Ranker(tools));
}

/** The key under which the index of `tools` is shared (this gateway build's format). */
export const sharedIndexKey = (tools: readonly SearchableTool[]): Promise<string> => indexKey(FORMAT, tools, CHUNK);

/** BM25 on the search thread, whatever the list's size. */
export const threadRanker: RankerFactory = (tools) => searchThread.build(tools, undefined);

type Answer = Exclude<FromThread, { error: string }>;

interface Pending {
  resolve(answer: Answer): void;
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

  async build(tools: readonly SearchableTool[], share: IndexShare | undefined): Promise<ToolRanker> {
    const thread = this.#running();
    const index = this.#nextIndex++;
    this.#live++;
    let origin: IndexOrigin = 'loaded';
    try {
      const key = share ? await sharedIndexKey(tools) : undefined;
      if (!(share && key && (await this.#load(thread, index, tools.length, share, key)))) {
        origin = 'built';
        await this.#add(thread, index, tools);
        if (share && key) void this.#keep(thread, index, share, key);
      }
    } catch (err) {
      this.#drop({ index, thread });
      throw err;
    }
    const names = tools.map((t) => t.name);
    const ranker: ToolRanker = {
      origin,
      search: async (query, limit) => {
        const tokens = tokenize(query);
        const terms = tokens.map((t): TermPair => [t, term(t)]);
        const ids = await this.#ids(thread, (call) => ({ op: 'search', index, call, tokens, terms, limit }));
        return ids.map((id) => names[id]!);
      },
    };
    this.#collected.register(ranker, { index, thread });
    return ranker;
  }

  /** Indexes `tools` on the thread. */
  async #add(thread: Worker, index: number, tools: readonly SearchableTool[]): Promise<void> {
    const sent = new Set<string>();
    for (let from = 0; from < tools.length; from += CHUNK) {
      // The tokenizing and the copy to the thread are the loop's work: a chunk per turn.
      if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#thread !== thread) throw new Error('the search thread stopped');
      const docs = tools.slice(from, from + CHUNK).map((t, i) => tokenized(doc(t, from + i), sent));
      thread.postMessage({ op: 'add', index, docs: docs.map((d) => d.doc), terms: docs.flatMap((d) => d.terms) });
    }
    await this.#ids(thread, (call) => ({ op: 'built', index, call }));
  }

  /** Loads the index kept under `key`: false when none is kept, or the one kept does not load (then it is built). */
  async #load(thread: Worker, index: number, count: number, share: IndexShare, key: string): Promise<boolean> {
    const text = await share.get(key);
    if (text === undefined) return false;
    if (this.#thread !== thread) throw new Error('the search thread stopped');
    return this.#call(thread, (call) => ({ op: 'load', index, call, text, count })).then(
      () => true,
      () => false,
    );
  }

  /** Keeps the index built for the other processes; what fails here only costs them a build of their own. */
  async #keep(thread: Worker, index: number, share: IndexShare, key: string): Promise<void> {
    const answer = await this.#call(thread, (call) => ({ op: 'dump', index, call })).catch(() => undefined);
    if (answer && 'text' in answer) await share.put(key, answer.text);
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
      else pending.resolve(m);
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

  /** A call on `thread` answered with ids (a search; a build, with none). */
  async #ids(thread: Worker, message: (call: number) => ToThread): Promise<number[]> {
    const answer = await this.#call(thread, message);
    return 'ids' in answer ? answer.ids : [];
  }

  /** A call on `thread`; fails at once if that thread is gone. */
  #call(thread: Worker, message: (call: number) => ToThread): Promise<Answer> {
    if (this.#thread !== thread) return Promise.reject(new Error('the search thread stopped'));
    const call = this.#nextCall++;
    return new Promise<Answer>((resolve, reject) => {
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
