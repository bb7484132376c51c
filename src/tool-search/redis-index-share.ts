/**
 * Built indexes in Redis, beside the sessions: `<keyPrefix>toolindex:<gateway version>:<key>`,
 * each kept for a day from when it was first built (a catalog version that lives longer is built
 * once more a day, by whichever replica asks first). The first process to keep one wins (SET NX):
 * replicas that build the same version at once each build, and keep one copy. A store that fails
 * costs only a build: the connection's errors are logged by connectRedis, a command's here.
 */
import type { Logger } from '../observability/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { IndexShare } from './index-share.js';

/** How long a kept index stays. */
export const INDEX_TTL_MS = 24 * 3_600_000;

/**
 * How long a search waits for a kept index before it builds its own: a Redis that takes the
 * connection and never answers must not hold the first search for the command timeout.
 */
export const INDEX_WAIT_MS = 2000;

/** Larger indexes (in characters of JSON) are not kept: they would hold Redis and its clients for seconds. */
export const MAX_INDEX_CHARS = 64 * 2 ** 20;

export class RedisIndexShare implements IndexShare {
  /** `redis`: a connection of its own, as an index is megabytes: sessions' commands do not wait behind it. */
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly log: Logger,
    private readonly waitMs = INDEX_WAIT_MS,
  ) {}

  async get(key: string): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Error>((resolve) => {
      timer = setTimeout(() => resolve(new Error(`no answer within ${this.waitMs} ms`)), this.waitMs);
    });
    const read = this.redis.get(this.prefix + key).then(
      (text) => text ?? undefined,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    const answer = await Promise.race([read, late]);
    clearTimeout(timer);
    if (!(answer instanceof Error)) return answer;
    this.log.warn({ err: answer.message }, 'tool search: a kept index could not be read; building it');
    return undefined;
  }

  async put(key: string, text: string): Promise<void> {
    if (text.length > MAX_INDEX_CHARS) return;
    try {
      await this.redis.set(this.prefix + key, text, 'PX', INDEX_TTL_MS, 'NX');
    } catch (err) {
      this.log.warn({ err: String(err) }, 'tool search: a built index could not be kept for the other replicas');
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
