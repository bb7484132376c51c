/**
 * The rate limits a running gateway applies: rebuilt from `rateLimits:` at start and by each
 * reload, over one counter store made the first time any rule exists (Redis when sessions are
 * there, else memory) and kept from then on, so the counters of rules a reload keeps (by name and
 * key) keep counting. No rule: the request chain has no rate-limit wrapper at all.
 */
import type { Logger } from 'pino';
import type { RateLimitsConfig, SessionsConfig } from '../config/schema.js';
import { rateLimitWarnings } from '../config/rate-limits.js';
import type { DataPathEvents } from '../observability/events.js';
import { connectRedis, redisTarget, type RedisClient } from '../redis/connection.js';
import { MemoryCounterStore, type CounterStore } from './counter-store.js';
import { RateLimiter } from './rate-limiter.js';
import { RedisCounterStore } from './redis-counter-store.js';

/** How long start-up waits for the counters' Redis connection before it goes on (onStoreError meanwhile). */
const READY_WAIT_MS = 5000;

export class LiveRateLimits {
  #store: CounterStore | undefined;
  #redis: RedisClient | undefined;

  constructor(
    private readonly sessions: SessionsConfig,
    private readonly events: DataPathEvents,
    private readonly log: Logger,
    /** Where the limiter goes (the request chain), undefined: no rule. */
    private readonly apply: (limiter: RateLimiter | undefined) => void,
  ) {}

  /** `config` from the next request on; what selects none of `upstreams` is logged (--check says more). */
  set(config: RateLimitsConfig | undefined, upstreams: readonly string[]): void {
    for (const warning of rateLimitWarnings(config, upstreams)) this.log.warn({ warning }, 'rateLimits');
    if (!config || config.rules.length === 0) return this.apply(undefined);
    this.#store ??= this.#makeStore(config.storeTimeoutMs);
    this.apply(new RateLimiter(config, this.#store, this.events, this.log));
  }

  /** Resolves once the counters' Redis connection is ready (or after a while: requests meet onStoreError then). */
  async ready(): Promise<void> {
    const redis = this.#redis;
    if (!redis || redis.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((done) => {
      timer = setTimeout(done, READY_WAIT_MS);
      redis.once('ready', () => done());
    });
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    await this.#store?.close();
  }

  #makeStore(storeTimeoutMs: number): CounterStore {
    const target = redisTarget(this.sessions);
    if (!target) return new MemoryCounterStore();
    // A connection of its own: its command timeout bounds what a request waits for its count.
    this.#redis = connectRedis({
      target,
      name: 'mcp-gateway-rate-limits',
      log: this.log,
      commandTimeoutMs: storeTimeoutMs,
    });
    return new RedisCounterStore(this.#redis, this.sessions.keyPrefix);
  }
}
