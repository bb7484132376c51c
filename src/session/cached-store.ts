import type { SessionRecord, SessionStore } from './session-store.js';

interface Cached {
  record: SessionRecord;
  at: number;
}

/**
 * A short-lived read cache in front of a shared store (Redis): a session used many times a
 * second costs one Redis read per `maxAgeMs` instead of one per request. Bounded staleness: a
 * session deleted (or changed) through another replica can still be served here for at most
 * `maxAgeMs`; deletes and updates made through this replica take effect here at once.
 */
export class CachedSessionStore implements SessionStore {
  readonly #cache = new Map<string, Cached>();

  constructor(
    private readonly inner: SessionStore,
    private readonly maxAgeMs: number,
    private readonly maxEntries = 10_000,
  ) {
    inner.onExpired((id) => this.#cache.delete(id));
  }

  async create(record: SessionRecord): Promise<void> {
    await this.inner.create(record);
    this.#remember(record);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const hit = this.#cache.get(id);
    if (hit && Date.now() - hit.at < this.maxAgeMs) return { ...hit.record };
    const record = await this.inner.get(id);
    if (record) this.#remember(record);
    else this.#cache.delete(id);
    return record;
  }

  async update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean> {
    this.#cache.delete(id);
    return this.inner.update(id, patch);
  }

  async delete(id: string): Promise<boolean> {
    this.#cache.delete(id);
    return this.inner.delete(id);
  }

  onExpired(listener: (id: string) => void): void {
    this.inner.onExpired(listener);
  }

  size(): Promise<number> {
    return this.inner.size();
  }

  async close(): Promise<void> {
    this.#cache.clear();
    await this.inner.close();
  }

  #remember(record: SessionRecord): void {
    this.#cache.delete(record.id);
    this.#cache.set(record.id, { record: { ...record }, at: Date.now() });
    // Insertion order is age order: the oldest entries go first.
    while (this.#cache.size > this.maxEntries) {
      const oldest = this.#cache.keys().next();
      if (oldest.done) break;
      this.#cache.delete(oldest.value);
    }
  }
}
