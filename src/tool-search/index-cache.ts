// One ranker per version of an endpoint's tool list, shared by every session that reads it.
// Keyed by the list itself: each catalog version (and each virtual server's view of it) is a new
// array, so a list_changed or a reload makes a new key and the old index goes with its catalog
// (a WeakMap: nothing to evict). Built in a later turn of the event loop, never inside the
// request that first asks: tools/list only starts it, and a search waits for it.
import type { IndexOrigin, RankerFactory, SearchableTool, ToolRanker } from './ranker.js';

type Entry = Record<string, unknown>;

export interface ToolIndex {
  ranker: ToolRanker;
  /** The entries indexed, by exposed name. */
  byName: ReadonlyMap<string, Entry>;
}

export class ToolIndexes {
  readonly #built = new WeakMap<ReadonlyArray<Entry>, Promise<ToolIndex>>();

  constructor(
    private readonly factory: RankerFactory,
    /** Hears each index made, and where from. */
    private readonly made: (origin: IndexOrigin) => void = () => undefined,
  ) {}

  /** The index of `list`, built on first ask; `describe` turns an entry into what the ranker sees. */
  index(list: ReadonlyArray<Entry>, describe: (entry: Entry) => SearchableTool): Promise<ToolIndex> {
    let index = this.#built.get(list);
    if (!index) {
      index = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#build(list, describe));
      this.#built.set(list, index);
      // A failed build is not kept: the next search tries again.
      index.catch(() => this.#built.delete(list));
    }
    return index;
  }

  /** Drops `list`'s index: the next ask builds it again. */
  forget(list: ReadonlyArray<Entry>): void {
    this.#built.delete(list);
  }

  /** Starts the build of `list`'s index, if not yet started, without waiting for it. */
  warm(list: ReadonlyArray<Entry>, describe: (entry: Entry) => SearchableTool): void {
    this.index(list, describe).catch(() => undefined);
  }

  async #build(list: ReadonlyArray<Entry>, describe: (entry: Entry) => SearchableTool): Promise<ToolIndex> {
    const byName = new Map(list.map((e) => [String(e.name), e]));
    const ranker = await this.factory(list.map(describe));
    this.made(ranker.origin ?? 'built');
    return { ranker, byName };
  }
}
