import { GatewayError } from '../jsonrpc/errors.js';
import {
  UNLIMITED,
  type SessionLimits,
  type SessionRecord,
  type SessionStore,
  type StoreEnd,
} from './session-store.js';

interface Entry {
  record: SessionRecord;
  lastUsed: number;
}

/**
 * In-process store: the embedded default, and the reference the Redis store is tested against.
 * Both maps are kept in order of last use (a use moves an entry to the end), so the least
 * recently used session, overall or of one principal, is always the first one.
 */
export class MemorySessionStore implements SessionStore {
  readonly #ttlMs: number;
  readonly #limits: SessionLimits;
  readonly #entries = new Map<string, Entry>();
  readonly #byPrincipal = new Map<string, Map<string, Entry>>();
  readonly #listeners: Array<(id: string, end: StoreEnd) => void> = [];
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: { ttlSeconds: number; sweepIntervalMs?: number; limits?: SessionLimits }) {
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#limits = options.limits ?? UNLIMITED;
    const interval = options.sweepIntervalMs ?? Math.min(60_000, Math.max(1000, this.#ttlMs / 4));
    this.#sweeper = setInterval(() => this.#sweep(), interval);
    this.#sweeper.unref();
  }

  async create(record: SessionRecord): Promise<void> {
    const principal = record.principal;
    const own = principal === undefined ? undefined : this.#byPrincipal.get(principal);
    if (own && this.#limits.maxPerPrincipal > 0)
      this.#makeRoom(own, this.#limits.maxPerPrincipal, 'PRINCIPAL_SESSION_LIMIT');
    this.#makeRoom(this.#entries, this.#limits.maxSessions, 'SESSION_LIMIT');
    const entry: Entry = { record: { ...record }, lastUsed: Date.now() };
    this.#entries.set(record.id, entry);
    if (principal !== undefined) {
      if (own) own.set(record.id, entry);
      else this.#byPrincipal.set(principal, new Map([[record.id, entry]]));
    }
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const entry = this.#live(id);
    if (!entry) return undefined;
    this.#used(id, entry);
    // A copy, as from Redis: a caller changing it must not change the store behind its back.
    return { ...entry.record };
  }

  async update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean> {
    const entry = this.#live(id);
    if (!entry) return false;
    // The principal is the session's identity, never patched: keep the index it sits in valid.
    entry.record = { ...entry.record, ...patch, id, principal: entry.record.principal };
    this.#used(id, entry);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    const existed = this.#live(id) !== undefined;
    this.#remove(id);
    return existed;
  }

  onExpired(listener: (id: string, end: StoreEnd) => void): void {
    this.#listeners.push(listener);
  }

  async size(): Promise<number> {
    return this.#entries.size;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#entries.clear();
    this.#byPrincipal.clear();
  }

  /** At `max`, the least recently used entry of `entries` goes if it has been idle long enough. */
  #makeRoom(entries: Map<string, Entry>, max: number, refusal: 'SESSION_LIMIT' | 'PRINCIPAL_SESSION_LIMIT'): void {
    const idleBefore = Date.now() - this.#limits.evictIdleMs;
    while (entries.size >= max) {
      const [id, oldest] = entries.entries().next().value as [string, Entry];
      if (oldest.lastUsed > idleBefore) {
        throw new GatewayError(refusal, undefined, { retryAfterMs: Math.max(1000, oldest.lastUsed - idleBefore) });
      }
      this.#expire(id, 'evicted');
    }
  }

  #used(id: string, entry: Entry): void {
    entry.lastUsed = Date.now();
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    const own = entry.record.principal === undefined ? undefined : this.#byPrincipal.get(entry.record.principal);
    if (own) {
      own.delete(id);
      own.set(id, entry);
    }
  }

  #remove(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    const principal = entry.record.principal;
    const own = principal === undefined ? undefined : this.#byPrincipal.get(principal);
    if (own?.delete(id) && own.size === 0) this.#byPrincipal.delete(principal!);
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
    // In order of last use: the expired ones are all at the front.
    const cutoff = Date.now() - this.#ttlMs;
    for (const [id, entry] of this.#entries) {
      if (entry.lastUsed >= cutoff) break;
      this.#expire(id);
    }
  }

  #expire(id: string, cause: StoreEnd['cause'] = 'expired'): void {
    const createdAt = this.#entries.get(id)?.record.createdAt;
    this.#remove(id);
    for (const listener of this.#listeners) listener(id, { cause, createdAt });
  }
}
