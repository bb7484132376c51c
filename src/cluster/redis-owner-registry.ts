import type { Logger } from '../observability/logger.js';
import type { OwnerRegistry } from './owner-registry.js';
import { perKey, type RedisClient } from '../redis/connection.js';

export interface RedisOwnerRegistryOptions {
  replicaId: string;
  keyPrefix: string;
  /** A replica is dead once its heartbeat is this old. */
  heartbeatTtlMs?: number;
  log?: Logger;
}

// Set the owner to ARGV[2] only if it is still ARGV[1] (or unset): a take-over never races
// another replica's take-over into two owners.
const TAKE_OVER = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return current end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return ARGV[2]
`;

/**
 * Ownership in Redis. `{scope}:owner:<upstream>` names the owner (hash-tagged with the session's
 * other keys); `replica:<id>` is each replica's heartbeat. Owner keys live as long as the owner
 * keeps refreshing them, so a dead replica's scopes free themselves even if nobody takes over.
 * Every command and script touches one key; the heartbeat refreshes keys of many slots, so it
 * sends them as one command per key on a Cluster (see perKey).
 */
export class RedisOwnerRegistry implements OwnerRegistry {
  readonly replicaId: string;
  readonly #ttl: number;
  readonly #owned = new Set<string>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: RedisOwnerRegistryOptions,
  ) {
    this.replicaId = options.replicaId;
    this.#ttl = options.heartbeatTtlMs ?? 3000;
    this.#timer = setInterval(() => void this.#heartbeat(), Math.floor(this.#ttl / 3));
    this.#timer.unref();
    // The first beat as soon as Redis is reachable (and after each reconnect), not a period later.
    redis.on('ready', () => void this.#heartbeat());
    void this.#heartbeat();
  }

  async claim(scope: string, upstream: string): Promise<string> {
    const key = this.#ownerKey(scope, upstream);
    const won = await this.redis.set(key, this.replicaId, 'PX', this.#ttl * 2, 'NX');
    if (won === 'OK') {
      this.#owned.add(key);
      return this.replicaId;
    }
    const owner = await this.redis.get(key);
    if (owner === null) return this.claim(scope, upstream);
    if (owner === this.replicaId) {
      this.#owned.add(key);
      return owner;
    }
    return (await this.isAlive(owner)) ? owner : this.takeOver(scope, upstream, owner);
  }

  async takeOver(scope: string, upstream: string, deadOwner: string): Promise<string> {
    const key = this.#ownerKey(scope, upstream);
    const owner = String(await this.redis.eval(TAKE_OVER, 1, key, deadOwner, this.replicaId, this.#ttl * 2));
    if (owner === this.replicaId) {
      this.#owned.add(key);
      this.options.log?.warn(
        { scope, upstream, deadOwner },
        'took over a per-session worker from a replica that stopped answering',
      );
    }
    return owner;
  }

  async ownerOf(scope: string, upstream: string): Promise<string | undefined> {
    return (await this.redis.get(this.#ownerKey(scope, upstream))) ?? undefined;
  }

  async release(scope: string, upstream: string): Promise<void> {
    const key = this.#ownerKey(scope, upstream);
    this.#owned.delete(key);
    // Only our own claim is removed: the owner may have changed meanwhile.
    await this.redis.eval(
      `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
      1,
      key,
      this.replicaId,
    );
  }

  async isAlive(replicaId: string): Promise<boolean> {
    if (replicaId === this.replicaId) return true;
    return (await this.redis.exists(this.#replicaKey(replicaId))) === 1;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const keys = [...this.#owned];
    this.#owned.clear();
    await Promise.all([this.redis.del(this.#replicaKey(this.replicaId)), ...keys.map((k) => this.redis.del(k))]).catch(
      () => undefined,
    );
  }

  async #heartbeat(): Promise<void> {
    // Not connected (yet): nothing could be sent; the connection's own errors say why.
    if (this.#closed || this.redis.status !== 'ready') return;
    try {
      const replicaKey = this.#replicaKey(this.replicaId);
      const replies = await perKey(this.redis, [replicaKey, ...this.#owned], (pipeline, key) =>
        key === replicaKey ? pipeline.set(key, '1', 'PX', this.#ttl) : pipeline.pexpire(key, this.#ttl * 2),
      );
      const failed = replies.find(([err]) => err !== null);
      if (failed) throw failed[0];
    } catch (err) {
      this.options.log?.warn({ err: (err as Error).message }, 'replica heartbeat failed');
    }
  }

  #ownerKey(scope: string, upstream: string): string {
    return `${this.options.keyPrefix}{${scope}}:owner:${upstream}`;
  }

  #replicaKey(replicaId: string): string {
    return `${this.options.keyPrefix}replica:${replicaId}`;
  }
}
