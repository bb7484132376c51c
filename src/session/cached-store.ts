import type { SessionRecord, SessionStore, StoreEnd } from './session-store.js';

interface Cached {
  record: SessionRecord;
  at: number;
}

export interface CachedSessionStoreOptions {
  /** How long a record may be served from this replica's cache. */
  maxAgeMs: number;
  /** false while the shared store is unreachable: the cache is then neither read nor kept. */
  healthy?: () => boolean;
  /**
   * Tells the other replicas that a record changed or went (they call `invalidate`). Awaited
   * before a delete or update returns: the message is with Redis then, and reaches the others as
   * fast as pub/sub delivers (a Cluster relays it between nodes first), not necessarily before
   * the client's next request does.
   */
  announce?: (id: string) => Promise<void>;
  maxEntries?: number;
}

/**
 * A short-lived read cache in front of a shared store (Redis): a session used many times a
 * second costs one Redis read per `maxAgeMs` instead of one per request. Changes made through
 * any replica invalidate every replica's copy (announce → invalidate); if such a message is
 * lost, a copy is stale for at most `maxAgeMs`. While the store is unreachable nothing is
 * served from the cache, so an outage answers as it would without one.
 */
export class CachedSessionStore implements SessionStore {
  readonly #cache = new Map<string, Cached>();
  readonly #maxEntries: number;

  constructor(
    private readonly inner: SessionStore,
    private readonly options: CachedSessionStoreOptions,
  ) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    inner.onExpired((id) => this.#cache.delete(id));
  }

  /** Another replica changed or deleted this session. */
  invalidate(id: string): void {
    this.#cache.delete(id);
  }

  async create(record: SessionRecord): Promise<void> {
    await this.inner.create(record);
    this.#remember(record);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    if (this.options.healthy && !this.options.healthy()) {
      this.#cache.clear();
      return this.inner.get(id);
    }
    const hit = this.#cache.get(id);
    if (hit && Date.now() - hit.at < this.options.maxAgeMs) return { ...hit.record };
    const record = await this.inner.get(id);
    if (record) this.#remember(record);
    else this.#cache.delete(id);
    return record;
  }

  async update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean> {
    this.#cache.delete(id);
    const updated = await this.inner.update(id, patch);
    await this.#announce(id);
    return updated;
  }

  async delete(id: string): Promise<boolean> {
    this.#cache.delete(id);
    const deleted = await this.inner.delete(id);
    await this.#announce(id);
    return deleted;
  }

  onExpired(listener: (id: string, end: StoreEnd) => void): void {
    this.inner.onExpired(listener);
  }

  size(): Promise<number> {
    return this.inner.size();
  }

  async close(): Promise<void> {
    this.#cache.clear();
    await this.inner.close();
  }

  async #announce(id: string): Promise<void> {
    // A lost announcement leaves other replicas' copies stale for at most maxAgeMs.
    await this.options.announce?.(id).catch(() => undefined);
  }

  #remember(record: SessionRecord): void {
    this.#cache.delete(record.id);
    this.#cache.set(record.id, { record: { ...record }, at: Date.now() });
    // Insertion order is age order: the oldest entries go first.
    while (this.#cache.size > this.#maxEntries) {
      const oldest = this.#cache.keys().next();
      if (oldest.done) break;
      this.#cache.delete(oldest.value);
    }
  }
}
