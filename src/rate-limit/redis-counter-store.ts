/**
 * Rate-limit counters in Redis: one count across every replica. One Lua script per take, so a
 * take is atomic whatever the replicas do at once, and Redis's own clock (TIME) decides windows,
 * so replicas whose clocks drift still agree. The script is counter-store.ts's takeAt.
 *
 * A counter is a hash `<keyPrefix>ratelimit:<rule>:<key>` ({u: admissions used, s: its window's
 * start}) that expires when it is full again: a counter unused for a window costs nothing.
 * A take touches one key, so a Redis Cluster takes it as it is.
 */
import type { RedisClient } from '../redis/connection.js';
import type { CounterShape, CounterStore } from './counter-store.js';
import { firstReady } from './first-ready.js';
import { luaCommand } from '../redis/lua-command.js';

const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, window, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local capacity = limit + burst
local v = redis.call('HMGET', KEYS[1], 'u', 's')
local used = tonumber(v[1]) or 0
local start = tonumber(v[2]) or now
local windows = math.floor((now - start) / window)
if windows > 0 then
  used = math.max(0, used - windows * limit)
  start = start + windows * window
end
local wait = 0
if used < capacity then
  used = used + 1
else
  wait = math.max(1, start + (math.floor((used - capacity) / limit) + 1) * window - now)
end
redis.call('HSET', KEYS[1], 'u', used, 's', start)
redis.call('PEXPIRE', KEYS[1], math.max(1, start + window * math.max(1, math.ceil(used / limit)) - now))
return wait
`;

type Take = (key: string, limit: number, windowMs: number, burst: number) => Promise<number>;

export class RedisCounterStore implements CounterStore {
  readonly #take: Take;
  /** Until the connection is first ready (a reload made the store just now): takes wait for it, a while. */
  readonly #ready: () => Promise<void> | undefined;

  /** `redis`: a connection of its own, whose command timeout is `timeoutMs` (rateLimits.storeTimeoutMs). */
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    timeoutMs: number,
  ) {
    this.#take = luaCommand<Take>(redis, 'mcpgwRateTake', TAKE, 1);
    this.#ready = firstReady(redis, timeoutMs);
  }

  take(key: string, shape: CounterShape): Promise<number> {
    const take = () => this.#take(`${this.keyPrefix}ratelimit:${key}`, shape.limit, shape.windowMs, shape.burst);
    return this.#ready()?.then(take) ?? take();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
