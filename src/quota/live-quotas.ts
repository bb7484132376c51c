/**
 * The quotas a running gateway applies: rebuilt from `quotas:` at start and by each reload, over
 * one counter store made the first time any quota exists (Redis when sessions are there, else
 * memory) and kept from then on, so the counts of quotas a reload keeps (by name) keep counting.
 * It hears this gateway's upstream:call-end (while a quota counts time upstream) and adds each
 * call's seconds. No quota: the request chain has no quota wrapper at all.
 */
import type { Logger } from 'pino';
import type { QuotasConfig, SessionsConfig } from '../config/schema.js';
import { quotaWarnings } from '../config/quotas.js';
import { subscribe, type DataPathEvents } from '../observability/events.js';
import { connectRedis, redisTarget } from '../redis/connection.js';
import { MemoryQuotaStore, type QuotaStore } from './quota-store.js';
import { Quotas, type QuotaReport } from './quotas.js';
import { RedisQuotaStore } from './redis-quota-store.js';

export class LiveQuotas {
  #store: QuotaStore | undefined;
  #quotas: Quotas | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly sessions: SessionsConfig,
    private readonly events: DataPathEvents,
    private readonly log: Logger,
    /** Where the quotas go (the request chain), undefined: no quota. */
    private readonly apply: (quotas: Quotas | undefined) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** `config` from the next request on; what selects none of `upstreams` is logged (--check says more). */
  set(config: QuotasConfig | undefined, upstreams: readonly string[]): void {
    for (const warning of quotaWarnings(config, upstreams)) this.log.warn({ warning }, 'quotas');
    if (!config || config.rules.length === 0) {
      this.#quotas = undefined;
      this.#hearCalls(false);
      return this.apply(undefined);
    }
    this.#store ??= this.#makeStore(config.storeTimeoutMs);
    this.#quotas = new Quotas(config, this.#store, this.events, this.log, this.now);
    this.#hearCalls(this.#quotas.timed);
    this.apply(this.#quotas);
  }

  /** For /status: every quota's window and top consumers; none configured: empty. */
  report(): Promise<QuotaReport[]> {
    return this.#quotas?.report() ?? Promise.resolve([]);
  }

  async close(): Promise<void> {
    this.#hearCalls(false);
    await this.#store?.close();
  }

  /** Subscribed only while a quota counts seconds: the event is built only when someone hears it. */
  #hearCalls(on: boolean): void {
    if (on && !this.#unsubscribe)
      this.#unsubscribe = subscribe(this.events.gateway, {
        'upstream:call-end': (e) => {
          if (e.method === 'tools/call')
            this.#quotas?.spent({ who: e.who, upstream: e.upstream, tool: e.tool, seconds: e.seconds });
        },
      });
    else if (!on && this.#unsubscribe) {
      this.#unsubscribe();
      this.#unsubscribe = undefined;
    }
  }

  #makeStore(storeTimeoutMs: number): QuotaStore {
    const target = redisTarget(this.sessions);
    if (!target) return new MemoryQuotaStore(this.now);
    // A connection of its own, as the rate limits have: its command timeout bounds what a call waits for its count.
    const redis = connectRedis({ target, name: 'mcp-gateway-quotas', log: this.log, commandTimeoutMs: storeTimeoutMs });
    return new RedisQuotaStore(redis, this.sessions.keyPrefix, storeTimeoutMs);
  }
}
