/**
 * Quota counts in Redis: one count across every replica, kept across restarts. Per quota and
 * window, under one hash tag (`<keyPrefix>quota:{<quota>:<window>}`: a Redis Cluster keeps them in
 * one slot), a counter per principal and measure (`:c:<who>` calls, `:s:<who>` seconds) and a
 * sorted set per measure (`:zc`, `:zs`) of every principal's use, which /status reads its top
 * consumers from on any replica. Every key expires when its window ends.
 *
 * An admission is one Lua script (check, INCRBY, ZINCRBY), so replicas at once admit exactly the
 * limit; a call's seconds are one MULTI (INCRBYFLOAT, ZINCRBY) as it ends.
 */
import type { RedisClient } from '../redis/connection.js';
import { firstReady } from '../rate-limit/first-ready.js';
import { byUse, type QuotaCounter, type QuotaLimits, type QuotaMeasure } from './quota-store.js';
import type { QuotaStore, QuotaUse, QuotaVerdict } from './quota-store.js';
import { luaCommand } from '../redis/lua-command.js';

/** KEYS: calls, seconds, calls' sorted set; ARGV: calls limit (0: none), seconds limit (0: none), who, expire at. */
const ADMIT = `
local calls, seconds = tonumber(ARGV[1]), tonumber(ARGV[2])
if seconds > 0 and tonumber(redis.call('GET', KEYS[2]) or '0') >= seconds then return 2 end
if calls > 0 then
  if tonumber(redis.call('GET', KEYS[1]) or '0') >= calls then return 1 end
  redis.call('INCRBY', KEYS[1], 1)
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('ZINCRBY', KEYS[3], 1, ARGV[3])
  redis.call('PEXPIREAT', KEYS[3], ARGV[4])
end
return 0
`;

type Admit = (calls: string, seconds: string, top: string, ...args: Array<string | number>) => Promise<number>;

const VERDICTS: readonly QuotaVerdict[] = ['ok', 'calls', 'upstreamSeconds'];

export class RedisQuotaStore implements QuotaStore {
  readonly #admit: Admit;
  readonly #ready: () => Promise<void> | undefined;

  /** `redis`: a connection of its own, whose command timeout is `timeoutMs` (quotas.storeTimeoutMs). */
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    timeoutMs: number,
  ) {
    this.#admit = luaCommand<Admit>(redis, 'mcpgwQuotaAdmit', ADMIT, 3);
    this.#ready = firstReady(redis, timeoutMs);
  }

  admit(c: QuotaCounter, limits: QuotaLimits): Promise<QuotaVerdict> {
    const base = this.#base(c.quota, c.window);
    const run = () =>
      this.#admit(
        `${base}:c:${c.who}`,
        `${base}:s:${c.who}`,
        `${base}:zc`,
        limits.calls ?? 0,
        limits.upstreamSeconds ?? 0,
        c.who,
        c.expireAt,
      ).then((v) => VERDICTS[v] ?? 'ok');
    return this.#ready()?.then(run) ?? run();
  }

  async addSeconds(c: QuotaCounter, seconds: number): Promise<void> {
    await this.#ready();
    const base = this.#base(c.quota, c.window);
    const key = `${base}:s:${c.who}`;
    const replies = await this.redis
      .multi()
      .incrbyfloat(key, seconds)
      .pexpireat(key, c.expireAt)
      .zincrby(`${base}:zs`, seconds, c.who)
      .pexpireat(`${base}:zs`, c.expireAt)
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
  }

  async top(quota: string, window: string, measure: QuotaMeasure, n: number): Promise<QuotaUse[]> {
    await this.#ready();
    const set = `${this.#base(quota, window)}:${measure === 'calls' ? 'zc' : 'zs'}`;
    const flat = await this.redis.zrevrange(set, 0, n - 1, 'WITHSCORES');
    const out: QuotaUse[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ who: flat[i]!, used: Number(flat[i + 1]) });
    // ZREVRANGE orders a tie by name backwards: the memory store's order instead.
    return out.sort(byUse);
  }

  #base(quota: string, window: string): string {
    return `${this.keyPrefix}quota:{${quota}:${window}}`;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
