import type { SessionRecord, SessionStore } from './session-store.js';

interface Entry {
  record: SessionRecord;
  lastUsed: number;
}

/** In-process store: the embedded default, and the reference the Redis store is tested against. */
export class MemorySessionStore implements SessionStore {
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #listeners: Array<(id: string) => void> = [];
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: { ttlSeconds: number; sweepIntervalMs?: number }) {
    this.#ttlMs = options.ttlSeconds * 1000;
    const interval = options.sweepIntervalMs ?? Math.min(60_000, Math.max(1000, this.#ttlMs / 4));
    this.#sweeper = setInterval(() => this.#sweep(), interval);
    this.#sweeper.unref();
  }

  async create(record: SessionRecord): Promise<void> {
    this.#entries.set(record.id, { record: { ...record }, lastUsed: Date.now() });
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const entry = this.#live(id);
    if (!entry) return undefined;
    entry.lastUsed = Date.now();
    // A copy, as from Redis: a caller changing it must not change the store behind its back.
    return { ...entry.record };
  }

  async update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean> {
    const entry = this.#live(id);
    if (!entry) return false;
    entry.record = { ...entry.record, ...patch, id };
    entry.lastUsed = Date.now();
    return true;
  }

  async delete(id: string): Promise<boolean> {
    const existed = this.#live(id) !== undefined;
    this.#entries.delete(id);
    return existed;
  }

  onExpired(listener: (id: string) => void): void {
    this.#listeners.push(listener);
  }

  async size(): Promise<number> {
    return this.#entries.size;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#entries.clear();
  }

  #live(id: string): Entry | undefined {
    const entry = this.#entries.get(id);
    if (entry && Date.now() - entry.lastUsed > this.#ttlMs) {
      this.#expire(id);
      return undefined;
    }
    return entry;
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#ttlMs;
    for (const [id, entry] of this.#entries) {
      if (entry.lastUsed < cutoff) this.#expire(id);
    }
  }

  #expire(id: string): void {
    this.#entries.delete(id);
    for (const listener of this.#listeners) listener(id);
  }
}
