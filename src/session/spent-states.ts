import { GatewayError } from '../jsonrpc/errors.js';
import type { SpentStates } from '../contracts/spent-states.js';
import type { RedisClient } from '../redis/connection.js';

/** Used states remembered by one replica, at most (past it the oldest go: their expiry still refuses them later). */
const MAX_SPENT = 100_000;

/** One replica's record: a replay that reaches another replica is not seen here. */
export class MemorySpentStates implements SpentStates {
  readonly #spent = new Map<string, number>();

  async spend(nonce: string, expiresAt: number): Promise<boolean> {
    if (this.#spent.has(nonce)) return false;
    if (this.#spent.size >= MAX_SPENT) {
      const now = Date.now();
      for (const [j, e] of this.#spent) if (e <= now) this.#spent.delete(j);
      for (const j of this.#spent.keys()) {
        if (this.#spent.size < MAX_SPENT) break;
        this.#spent.delete(j);
      }
    }
    this.#spent.set(nonce, expiresAt);
    return true;
  }

  async close(): Promise<void> {}
}

/**
 * Every replica's record, in Redis beside the sessions: `${keyPrefix}spent:<nonce>`, set with
 * NX for as long as the state lives (PX), so exactly one use wins wherever it arrives. Redis
 * not answering refuses the state (retryable): an unchecked replay must never go upstream.
 */
export class RedisSpentStates implements SpentStates {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  async spend(nonce: string, expiresAt: number): Promise<boolean> {
    const ttlMs = Math.max(1, Math.ceil(expiresAt - Date.now()));
    let set: string | null;
    try {
      set = await this.redis.set(`${this.keyPrefix}spent:${nonce}`, '1', 'PX', ttlMs, 'NX');
    } catch (err) {
      throw new GatewayError(
        'SESSION_STORE_UNAVAILABLE',
        `Cannot check the requestState against the session store: ${err instanceof Error ? err.message : String(err)}`,
        { retryAfterMs: 1000 },
      );
    }
    return set === 'OK';
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
