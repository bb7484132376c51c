/**
 * A store's Redis connection made just now (a reload's first rule): until it is first ready,
 * commands wait for it, up to the store's timeout; then they fail fast (no offline queue), as in
 * an outage. Shared by the rate-limit counters and the quota counters.
 */
import type { RedisClient } from '../redis/connection.js';

/** A wait before each command: undefined once the connection has been ready. */
export function firstReady(redis: RedisClient, timeoutMs: number): () => Promise<void> | undefined {
  if (redis.status === 'ready') return () => undefined;
  let pending: Promise<void> | undefined = new Promise<void>((done) => redis.once('ready', () => done())).then(() => {
    pending = undefined;
  });
  return () => {
    if (!pending) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((done) => (timer = setTimeout(done, timeoutMs)));
    return Promise.race([pending, late]).then(() => clearTimeout(timer));
  };
}
