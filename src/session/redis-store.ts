import { Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { ClusterHealth } from '../redis/cluster-health.js';
import { backoff, createRedisClient, errorCode, errorMessage, perKey, type RedisClient } from '../redis/connection.js';
import { RedisExpiryEvents } from '../redis/expiry-events.js';
import { RedisPing } from '../redis/ping.js';
import { casUpdate, defineSessionCas } from './redis-session-cas.js';
import { RedisSessionIndex } from './redis-session-index.js';
import type { RedisSessionStoreOptions, RedisStoreStatus } from './redis-store-options.js';
import { UNLIMITED, type SessionRecord, type SessionStore, type StoreEnd } from './session-store.js';

export type { RedisSessionStoreOptions, RedisStoreStatus } from './redis-store-options.js';

interface Tracked {
  /** When this replica last set the key's TTL (taken before the command was sent). */
  refreshedAt: number;
  principal: string | undefined;
  /** Set on the replica that opened the session only: the one that times its expiry (once, not per replica). */
  createdAt?: number;
}

const SWEEP_BATCH = 1000;

/**
 * Sessions in Redis: one string key per session, `${keyPrefix}{${id}}:session`, holding the JSON
 * record. The `{id}` hash tag keeps every key of one session in one Cluster slot.
 *
 * Idle expiry without a write per request: the key's TTL is `ttl + refresh`, where refresh is
 * `refreshFraction` (10 %) of the ttl, and a use re-sets it (PEXPIRE, pipelined with the GET, so
 * still one round trip) only when this replica last did so more than `refresh` ago. A session used
 * at time t therefore lives until at least t + ttl (never early) and at most t + ttl + refresh
 * after its last use (bounded lateness). Another replica that has not refreshed the session
 * itself always refreshes on its first use.
 *
 * Expiry events: keyspace notifications (`__keyevent@<db>__:expired`, from every node of a Cluster:
 * see redis/expiry-events.ts) when they can be enabled,
 * else (and as a backstop for notifications lost while disconnected) a local sweep that checks
 * the sessions this replica tracks once they are past their possible expiry. Either way, events
 * fire only for sessions this replica knows of (created or used here, within `maxTracked`), once
 * each; a session deleted by another replica is reported here as expired (the two cannot be told
 * apart, and listeners only release local resources). `size()` is that local view, not a global
 * count.
 *
 * Fails fast: no offline queue, one retry per request, connect and command timeouts; every Redis
 * error is thrown to the caller (the transport answers SESSION_STORE_UNAVAILABLE). Reconnects with
 * backoff forever; `ready`/`status()` feed /readyz.
 */
export class RedisSessionStore implements SessionStore {
  readonly #redis: RedisClient;
  readonly #index: RedisSessionIndex;
  readonly #events: RedisExpiryEvents | undefined;
  readonly #clusterHealth: ClusterHealth | undefined;
  readonly #ping: RedisPing | undefined;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #refreshMs: number;
  readonly #keyTtlMs: number;
  readonly #maxTracked: number;
  readonly #log: Logger | undefined;
  readonly #listeners: Array<(id: string, end: StoreEnd) => void> = [];
  /** Insertion order = refresh order: the oldest refresh is first. */
  readonly #tracked = new Map<string, Tracked>();
  readonly #sweeper: NodeJS.Timeout;
  #sweeping = false;
  #closed = false;
  #lastError: string | undefined;
  #loggedError: string | undefined;
  #wasReady = false;

  constructor(options: RedisSessionStoreOptions) {
    this.#prefix = options.keyPrefix ?? 'mcpgw:';
    if (/[{}]/.test(this.#prefix)) throw new Error('sessions.keyPrefix must not contain "{" or "}"');
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#refreshMs = Math.max(1, Math.round(this.#ttlMs * (options.refreshFraction ?? 0.1)));
    this.#keyTtlMs = this.#ttlMs + this.#refreshMs;
    this.#maxTracked = options.maxTracked ?? 100_000;
    this.#log = options.log;
    const retryIn = backoff(options.maxBackoffMs ?? 2000);

    const redisOptions: RedisOptions = {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: options.connectTimeoutMs ?? 2000,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      connectionName: 'mcp-gateway',
      retryStrategy: (attempt) => {
        const delay = retryIn(attempt);
        if (!this.#closed && (attempt === 1 || attempt % 20 === 0)) {
          this.#log?.warn(
            { attempt, retryInMs: delay, reason: this.#lastError },
            'session store: Redis unreachable, reconnecting',
          );
        }
        return delay;
      },
    };
    this.#redis = createRedisClient(options.target, redisOptions);
    defineSessionCas(this.#redis);
    this.#index = new RedisSessionIndex(this.#redis, this.#prefix, options.limits ?? UNLIMITED, this.#keyTtlMs);
    this.#redis.on('error', (err: unknown) => this.#onError(err));
    // A Cluster reports a node's errors apart from its own.
    if (this.#redis instanceof Cluster) this.#redis.on('node error', (err: unknown) => this.#onError(err));
    this.#redis.on('ready', () => this.#onReady());
    if (this.#redis instanceof Cluster) {
      this.#clusterHealth = new ClusterHealth(this.#redis, {
        intervalMs: options.clusterProbeIntervalMs,
        probeTimeoutMs: options.commandTimeoutMs ?? 2000,
        log: this.#log,
      });
    }
    if (!(this.#redis instanceof Cluster) && options.health) {
      const redis = this.#redis;
      this.#ping = new RedisPing(() => redis.ping(), {
        ...options.health,
        connected: () => redis.status === 'ready',
        log: this.#log,
      });
    }
    this.#redis.on('close', () => {
      if (this.#wasReady && !this.#closed)
        this.#log?.warn({ reason: this.#lastError }, 'session store: Redis connection lost');
      this.#wasReady = false;
      this.#lastError ??= 'CONNECTION_CLOSED';
    });

    if (options.keyspaceEvents ?? true) {
      this.#events = new RedisExpiryEvents(this.#redis, {
        onExpired: (key) => this.#onExpiredKey(key),
        maxBackoffMs: options.maxBackoffMs,
        log: this.#log,
      });
    }

    const sweepMs = options.sweepIntervalMs ?? Math.min(30_000, Math.max(1000, this.#refreshMs));
    this.#sweeper = setInterval(() => void this.#sweep(), sweepMs);
    this.#sweeper.unref();
  }

  /** true while commands can be sent (for a Cluster: unless it declared itself down). */
  get ready(): boolean {
    return (
      !this.#closed &&
      this.#redis.status === 'ready' &&
      this.#clusterHealth?.status.clusterState !== 'fail' &&
      this.#ping?.answering !== false
    );
  }

  status(): RedisStoreStatus {
    const s: RedisStoreStatus = {
      state: this.#closed ? 'closed' : this.ready ? 'ready' : 'unavailable',
      connection: this.#redis.status,
      expiryEvents: this.#events?.active ? 'keyspace' : 'local',
    };
    const cluster = this.#clusterHealth?.status;
    if (cluster) s.cluster = { state: cluster.clusterState, failingMasters: cluster.failingMasters };
    const lastError =
      cluster?.clusterState === 'fail'
        ? 'CLUSTERDOWN'
        : (this.#lastError ?? (this.#ping?.answering === false ? 'NO_PING_REPLY' : undefined));
    if (!this.ready && lastError) s.lastError = lastError;
    return s;
  }

  async create(record: SessionRecord): Promise<void> {
    const now = Date.now();
    const evicted = await this.#index.admit(record.id, record.principal, now);
    try {
      await this.#redis.set(this.#key(record.id), JSON.stringify(record), 'PX', this.#keyTtlMs);
    } catch (err) {
      this.#index.forget(record.id, record.principal);
      throw err;
    }
    this.#track(record.id, now, record.principal, record.createdAt);
    if (evicted.length > 0) await this.#evict(evicted);
  }

  /**
   * Sessions that made room for a new one: gone for every replica, released here at once, and
   * reported with when they were opened (GETDEL reads each record as it goes): this replica, the
   * one that evicted them, times them; any other that tracked one finds it gone, untimed.
   */
  async #evict(ids: string[]): Promise<void> {
    this.#log?.info(
      { sessions: ids.length },
      'session store: evicted the least recently used idle sessions to make room',
    );
    const records = await perKey(
      this.#redis,
      ids.map((id) => this.#key(id)),
      (pipeline, key) => pipeline.getdel(key),
    ).catch(() => []);
    ids.forEach((id, i) => {
      const [err, raw] = records[i] ?? [null, null];
      const createdAt = !err && typeof raw === 'string' ? (JSON.parse(raw) as SessionRecord).createdAt : undefined;
      const tracked = this.#tracked.get(id);
      this.#tracked.delete(id);
      if (tracked) this.#index.forget(id, tracked.principal);
      // Untracked here, still told: listeners release what this replica holds of it (a cached copy).
      this.#emitExpired(id, { cause: 'evicted', createdAt });
    });
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const key = this.#key(id);
    const now = Date.now();
    const tracked = this.#tracked.get(id);
    let raw: string | null;
    if (tracked && now - tracked.refreshedAt < this.#refreshMs) {
      raw = await this.#redis.get(key);
    } else {
      const results = await this.#redis.pipeline().get(key).pexpire(key, this.#keyTtlMs).exec();
      raw = this.#pipelineValue<string | null>(results, 0);
      this.#pipelineValue(results, 1);
      if (raw !== null) {
        const record = JSON.parse(raw) as SessionRecord;
        this.#track(id, now, record.principal);
        this.#index.touched(id, record.principal, now);
        return record;
      }
    }
    if (raw === null) {
      this.#gone(id);
      return undefined;
    }
    return JSON.parse(raw) as SessionRecord;
  }

  async update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean> {
    const apply = (raw: string) => JSON.stringify({ ...(JSON.parse(raw) as SessionRecord), ...patch, id });
    const written = await casUpdate(this.#redis, this.#key(id), apply, this.#keyTtlMs, id);
    if (!written) {
      this.#gone(id);
      return false;
    }
    const principal = (JSON.parse(written.before) as SessionRecord).principal;
    this.#track(id, written.at, principal);
    this.#index.touched(id, principal, written.at);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    // Forget it first: an expiry notification racing the DEL must not report a deleted session.
    const tracked = this.#tracked.get(id);
    this.#tracked.delete(id);
    const deleted = (await this.#redis.del(this.#key(id))) > 0;
    this.#index.forget(id, tracked?.principal);
    return deleted;
  }

  onExpired(listener: (id: string, end: StoreEnd) => void): void {
    this.#listeners.push(listener);
  }

  /** Sessions this replica created or used within about the last ttl (at most maxTracked). */
  async size(): Promise<number> {
    return this.#tracked.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.#tracked.clear();
    this.#events?.close();
    this.#clusterHealth?.close();
    this.#ping?.close();
    if (this.#redis.status === 'ready') {
      try {
        await this.#redis.quit();
        return;
      } catch {
        // fall through: drop the connection
      }
    }
    this.#redis.disconnect();
  }

  #key(id: string): string {
    return `${this.#prefix}{${id}}:session`;
  }

  #pipelineValue<T>(results: Array<[Error | null, unknown]> | null, index: number): T {
    const entry = results?.[index];
    if (!entry) throw new Error('session store: Redis pipeline returned no result');
    if (entry[0]) throw entry[0];
    return entry[1] as T;
  }

  #track(
    id: string,
    refreshedAt: number,
    principal: string | undefined,
    createdAt = this.#tracked.get(id)?.createdAt,
  ): void {
    this.#tracked.delete(id); // re-insert at the end: the map stays in refresh order
    this.#tracked.set(id, createdAt === undefined ? { refreshedAt, principal } : { refreshedAt, principal, createdAt });
    if (this.#tracked.size > this.#maxTracked) {
      const oldest = this.#tracked.keys().next();
      if (!oldest.done) this.#tracked.delete(oldest.value);
    }
  }

  /**
   * The key is gone: if this replica knew the session, report it expired (once). `expired`: Redis
   * said its TTL ran out (a keyspace event); otherwise (a read or the sweep found no key) it may
   * as well have been deleted or evicted by another replica, which timed it: not timed here.
   */
  #gone(id: string, expired = false): void {
    const tracked = this.#tracked.get(id);
    if (!tracked) return;
    this.#tracked.delete(id);
    this.#index.forget(id, tracked.principal);
    this.#emitExpired(id, { cause: 'expired', createdAt: expired ? tracked.createdAt : undefined });
  }

  #emitExpired(id: string, end: StoreEnd): void {
    for (const listener of this.#listeners) {
      try {
        listener(id, end);
      } catch (err) {
        this.#log?.error({ err, session: id }, 'session store: expiry listener failed');
      }
    }
  }

  #onExpiredKey(key: string): void {
    const head = `${this.#prefix}{`;
    const tail = '}:session';
    if (!key.startsWith(head) || !key.endsWith(tail)) return;
    this.#gone(key.slice(head.length, -tail.length), true);
  }

  /**
   * Tracked sessions whose TTL, as far as this replica knows, has run out: PTTL tells expired
   * ones (reported) from ones still alive (another replica kept them, or this replica's refresh
   * reached Redis a little after it was timed here), which are checked again when the TTL Redis
   * holds runs out. Checked again a whole ttl later instead, an expiry went unnoticed that long.
   */
  async #sweep(): Promise<void> {
    if (this.#sweeping || this.#closed || !this.ready) return;
    const cutoff = Date.now() - this.#keyTtlMs;
    const due: Array<[string, Tracked]> = [];
    for (const [id, tracked] of this.#tracked) {
      if (tracked.refreshedAt >= cutoff || due.length >= SWEEP_BATCH) break;
      due.push([id, tracked]);
    }
    if (due.length === 0) return;
    this.#sweeping = true;
    try {
      const results = await perKey(
        this.#redis,
        due.map(([id]) => this.#key(id)),
        (pipeline, key) => pipeline.pttl(key),
      );
      const now = Date.now();
      due.forEach(([id, tracked], i) => {
        if (this.#tracked.get(id) !== tracked) return; // used (or deleted) meanwhile
        const pttl = this.#pipelineValue<number>(results, i);
        if (pttl === -2) this.#gone(id);
        // As if refreshed when Redis last set that TTL: checked again as it runs out.
        else if (pttl >= 0) this.#track(id, now + pttl - this.#keyTtlMs, tracked.principal);
        else this.#track(id, now - this.#refreshMs, tracked.principal); // no TTL at all: the next use sets one
      });
    } catch (err) {
      this.#log?.debug({ err: errorMessage(err) }, 'session store: expiry sweep failed');
    } finally {
      this.#sweeping = false;
    }
  }

  #onError(err: unknown): void {
    this.#lastError = errorCode(err);
    const message = errorMessage(err);
    if (this.#closed || message === this.#loggedError) return;
    this.#loggedError = message;
    this.#log?.warn({ err: message, code: this.#lastError }, 'session store: Redis error');
  }

  #onReady(): void {
    if (this.#loggedError !== undefined) this.#log?.info('session store: Redis connection restored');
    else this.#log?.info('session store: connected to Redis');
    this.#loggedError = undefined;
    this.#lastError = undefined;
    this.#wasReady = true;
  }
}
