import type { PendingAuthorization, StoredToken, TokenStore } from '../contracts/token-store.js';
import { TokenCipher, pendingRecordId, tokenRecordId } from './token-store.js';

/** Past this many records the oldest written goes first: users cannot grow a replica's memory without bound. */
const DEFAULT_MAX_RECORDS = 100_000;

/** Tokens in this process (one replica, or tests), sealed as the Redis store seals them. */
export class MemoryTokenStore implements TokenStore {
  readonly #records = new Map<string, { sealed: string; retainUntil: number }>();

  constructor(
    private readonly cipher: TokenCipher,
    private readonly maxRecords = DEFAULT_MAX_RECORDS,
  ) {}

  async get(principal: string, upstream: string): Promise<StoredToken | undefined> {
    const id = tokenRecordId(principal, upstream);
    const record = this.#records.get(id);
    if (!record) return undefined;
    if (record.retainUntil <= Date.now()) {
      this.#records.delete(id);
      return undefined;
    }
    return this.cipher.open(record.sealed, principal, upstream);
  }

  async put(principal: string, upstream: string, token: StoredToken, retainUntil = token.expiresAt): Promise<void> {
    this.#write(tokenRecordId(principal, upstream), this.cipher.seal(token, principal, upstream), retainUntil);
  }

  async delete(principal: string, upstream: string): Promise<void> {
    this.#records.delete(tokenRecordId(principal, upstream));
  }

  async putPending(state: string, pending: PendingAuthorization): Promise<void> {
    this.#write(pendingRecordId(state), this.cipher.sealPending(pending, state), pending.expiresAt);
  }

  async getPending(state: string): Promise<PendingAuthorization | undefined> {
    const record = this.#records.get(pendingRecordId(state));
    return record ? this.cipher.openPending(record.sealed, state) : undefined;
  }

  async takePending(state: string): Promise<PendingAuthorization | undefined> {
    const id = pendingRecordId(state);
    const record = this.#records.get(id);
    this.#records.delete(id);
    return record ? this.cipher.openPending(record.sealed, state) : undefined;
  }

  #write(id: string, sealed: string, retainUntil: number): void {
    this.#records.delete(id);
    if (this.#records.size >= this.maxRecords) this.#records.delete(this.#records.keys().next().value!);
    this.#records.set(id, { sealed, retainUntil });
  }

  async close(): Promise<void> {
    this.#records.clear();
  }

  /** What is held, as held (tests: only ciphertext). */
  raw(): string[] {
    return [...this.#records.values()].map((r) => r.sealed);
  }
}
