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
import { connectRedis, redisTarget } from '../redis/connection.js';
import { MemoryCounterStore, type CounterStore } from './counter-store.js';
import { RateLimiter } from './rate-limiter.js';
import { RedisCounterStore } from './redis-counter-store.js';

export class LiveRateLimits {
  #store: CounterStore | undefined;

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

  async close(): Promise<void> {
    await this.#store?.close();
  }

  #makeStore(storeTimeoutMs: number): CounterStore {
    const target = redisTarget(this.sessions);
    if (!target) return new MemoryCounterStore();
    // A connection of its own: its command timeout bounds what a request waits for its count.
    // Until it is first connected, takes wait for it (up to the timeout): a reload's new rules count at once.
    const redis = connectRedis({
      target,
      name: 'mcp-gateway-rate-limits',
      log: this.log,
      commandTimeoutMs: storeTimeoutMs,
    });
    return new RedisCounterStore(redis, this.sessions.keyPrefix, storeTimeoutMs);
  }
}
