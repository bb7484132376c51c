// A session record's compare-and-set in Redis: a Lua script replaces the value only if nobody
// changed it since it was read, and refreshes the key's TTL with the write.
import type { RedisClient } from '../redis/connection.js';

type CasCommand = (key: string, expected: string, next: string, ttlMs: number) => Promise<number>;

// Replace the value only if nobody changed it since we read it; the write also refreshes the TTL.
// 1: written, 0: the key is gone, -1: it changed under us (read again).
const CAS_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if current ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

const CAS_ATTEMPTS = 5;

/** Defines the script's command on `redis` (once, when the store is made). */
export function defineSessionCas(redis: RedisClient): void {
  redis.defineCommand('mcpgwSessionCas', { numberOfKeys: 1, lua: CAS_SCRIPT });
}

/**
 * Writes `apply(value)` over the value at `key` if it has not changed meanwhile (read again if
 * it has, a few times): the value it replaced and when (taken before the write was sent), or
 * undefined when the key is gone. Throws when concurrent updates kept conflicting.
 */
export async function casUpdate(
  redis: RedisClient,
  key: string,
  apply: (raw: string) => string,
  ttlMs: number,
  id: string,
): Promise<{ before: string; at: number } | undefined> {
  const cas = (redis as unknown as { mcpgwSessionCas: CasCommand }).mcpgwSessionCas.bind(redis);
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
    const raw = await redis.get(key);
    if (raw === null) return undefined;
    const next = apply(raw);
    const now = Date.now();
    const result = Number(await cas(key, raw, next, ttlMs));
    if (result === 1) return { before: raw, at: now };
    if (result === 0) return undefined;
  }
  throw new Error(`session ${id}: concurrent updates kept conflicting`);
}
