import { createHash } from 'node:crypto';
import { GatewayError } from '../jsonrpc/errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { SessionLimits } from './session-store.js';

type AdmitCommand = (...args: Array<string | number>) => Promise<Array<string | number>>;

/**
 * Makes room for one new session and records it, atomically: stale members (whose keys have
 * certainly expired: not refreshed for a whole key TTL) are dropped first; then, at a limit, the
 * least recently used member goes if it has been idle long enough, else the new session is
 * refused. KEYS[1] the index of all sessions, KEYS[2] (optional) the principal's own index; both
 * carry the same hash tag, so the script runs on one Cluster node.
 * ARGV: now, expiredBefore, idleBefore, maxSessions, maxPerPrincipal, id.
 * Returns {0, evicted ids…}, or {1} (all sessions busy) or {2} (the principal's sessions busy).
 */
const ADMIT_SCRIPT = `
local now, expiredBefore, idleBefore = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local limits = { tonumber(ARGV[4]), tonumber(ARGV[5]) }
local id = ARGV[6]
local evicted = { 0 }
local function forget(member)
  for i = 1, #KEYS do redis.call('ZREM', KEYS[i], member) end
  table.insert(evicted, member)
end
local function makeRoom(key, limit)
  if limit <= 0 then return true end
  for _ = 1, 100 do
    if redis.call('ZCARD', key) < limit then return true end
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if tonumber(oldest[2]) > idleBefore then return false end
    forget(oldest[1])
  end
  return false
end
for i = 1, #KEYS do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. expiredBefore) end
if #KEYS == 2 and not makeRoom(KEYS[2], limits[2]) then return { 2 } end
if not makeRoom(KEYS[1], limits[1]) then return { 1 } end
for i = 1, #KEYS do redis.call('ZADD', KEYS[i], now, id) end
return evicted
`;

/**
 * Which sessions exist across all replicas, by last use: a sorted set of session ids scored by
 * the time their key's TTL was last set, and one per principal. It is what makes
 * `limits.maxSessions` global, and lets the oldest idle session make room for a new one. The
 * index is kept beside the session keys, not inside them, so a Cluster serves it from one slot;
 * its writes on use are not awaited (a lost one only makes a session look older than it is).
 */
export class RedisSessionIndex {
  readonly #all: string;
  readonly #prefix: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly limits: SessionLimits,
    /** A member not refreshed for this long has no key any more. */
    private readonly keyTtlMs: number,
  ) {
    this.#prefix = prefix;
    this.#all = `${prefix}{sessions}:index`;
    redis.defineCommand('mcpgwSessionAdmit', { lua: ADMIT_SCRIPT });
  }

  /**
   * Records a new session, or throws SESSION_LIMIT / PRINCIPAL_SESSION_LIMIT. Returns the ids
   * evicted to make room: their keys are the caller's to delete.
   */
  async admit(id: string, principal: string | undefined, now: number): Promise<string[]> {
    const keys =
      principal === undefined || this.limits.maxPerPrincipal === 0
        ? [this.#all]
        : [this.#all, this.#principalKey(principal)];
    const admitCommand = (this.redis as unknown as { mcpgwSessionAdmit: AdmitCommand }).mcpgwSessionAdmit.bind(
      this.redis,
    );
    const reply = await admitCommand(
      keys.length,
      ...keys,
      now,
      now - this.keyTtlMs,
      now - this.limits.evictIdleMs,
      this.limits.maxSessions,
      this.limits.maxPerPrincipal,
      id,
    );
    const [status, ...evicted] = reply;
    const retry = { retryAfterMs: Math.max(1000, Math.min(this.limits.evictIdleMs, 30_000)) };
    if (Number(status) === 1) throw new GatewayError('SESSION_LIMIT', undefined, retry);
    if (Number(status) === 2) throw new GatewayError('PRINCIPAL_SESSION_LIMIT', undefined, retry);
    return evicted.map(String);
  }

  /** The session's key TTL was just set again. Only existing members move (XX): an unknown id adds nothing. */
  touched(id: string, principal: string | undefined, now: number): void {
    for (const key of this.#keysOf(principal)) void this.redis.zadd(key, 'XX', now, id).catch(() => undefined);
  }

  forget(id: string, principal: string | undefined): void {
    for (const key of this.#keysOf(principal)) void this.redis.zrem(key, id).catch(() => undefined);
  }

  #keysOf(principal: string | undefined): string[] {
    return principal === undefined || this.limits.maxPerPrincipal === 0
      ? [this.#all]
      : [this.#all, this.#principalKey(principal)];
  }

  /** Principals are arbitrary strings (a JWT's sub): hashed, so a key stays short and plain. */
  #principalKey(principal: string): string {
    const digest = createHash('sha256').update(principal).digest('base64url').slice(0, 22);
    return `${this.#prefix}{sessions}:principal:${digest}`;
  }
}
