import type { PendingAuthorization, StoredToken, TokenStore } from '../contracts/token-store.js';
import type { RedisClient } from '../redis/connection.js';
import { TokenCipher, pendingRecordId, tokenRecordId } from './token-store.js';

/**
 * Tokens in Redis, for every replica: one string key per (principal, upstream),
 * `${keyPrefix}tokens:${digest}`, holding only the sealed record, with a TTL at its retention
 * end. Redis errors reach the caller (as with the session store).
 */
export class RedisTokenStore implements TokenStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly cipher: TokenCipher,
    private readonly keyPrefix: string,
  ) {}

  async get(principal: string, upstream: string): Promise<StoredToken | undefined> {
    const sealed = await this.redis.get(this.#key(principal, upstream));
    return sealed === null ? undefined : this.cipher.open(sealed, principal, upstream);
  }

  async put(principal: string, upstream: string, token: StoredToken, retainUntil = token.expiresAt): Promise<void> {
    const ttlMs = Math.max(1000, Math.round(retainUntil - Date.now()));
    await this.redis.set(this.#key(principal, upstream), this.cipher.seal(token, principal, upstream), 'PX', ttlMs);
  }

  async delete(principal: string, upstream: string): Promise<void> {
    await this.redis.del(this.#key(principal, upstream));
  }

  async putPending(state: string, pending: PendingAuthorization): Promise<void> {
    const ttlMs = Math.max(1000, Math.round(pending.expiresAt - Date.now()));
    await this.redis.set(this.#pendingKey(state), this.cipher.sealPending(pending, state), 'PX', ttlMs);
  }

  async getPending(state: string): Promise<PendingAuthorization | undefined> {
    const sealed = await this.redis.get(this.#pendingKey(state));
    return sealed === null ? undefined : this.cipher.openPending(sealed, state);
  }

  async takePending(state: string): Promise<PendingAuthorization | undefined> {
    // GETDEL (Redis 6.2): of two callbacks with one state, on any replicas, one gets it.
    const sealed = await this.redis.getdel(this.#pendingKey(state));
    return sealed === null ? undefined : this.cipher.openPending(sealed, state);
  }

  #pendingKey(state: string): string {
    return `${this.keyPrefix}tokens:p:${pendingRecordId(state)}`;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  #key(principal: string, upstream: string): string {
    return `${this.keyPrefix}tokens:${tokenRecordId(principal, upstream)}`;
  }
}
