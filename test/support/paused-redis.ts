/**
 * A Redis that a test pauses (SIGSTOP: it takes connections and never answers) and two gateways
 * sharing it that differ only in their `onStoreError` (allow, deny): the store-error tests of the
 * rate limits and the quotas. Their calls are stateless requests: no session read, so only the
 * store under test meets the paused Redis.
 */
import { afterAll, beforeAll } from 'vitest';
import { exampleConfig, startGateway, type RunningGateway } from './gateway.js';
import { postStateless } from './stateless.js';
import { startRedis, type RedisServer } from './redis.js';

export type OnStoreError = 'allow' | 'deny';

export interface PausedRedisPair {
  readonly redis: RedisServer;
  readonly allow: RunningGateway;
  readonly deny: RunningGateway;
  /** One stateless tools/call of echo__echo through `gw`. */
  call(gw: RunningGateway, id: number): ReturnType<typeof postStateless>;
  /** Runs `run` with Redis paused, and resumes it however `run` ends. */
  whilePaused<T>(run: () => Promise<T>): Promise<T>;
}

/**
 * Starts the Redis and both gateways before the file's tests and stops them after; `section`
 * is the part of each gateway's config beyond its sessions (e.g. `{ quotas: {...} }`).
 */
export function pausedRedisPair(section: (onStoreError: OnStoreError) => Record<string, unknown>): PausedRedisPair {
  let redis: RedisServer | undefined;
  let allow: RunningGateway | undefined;
  let deny: RunningGateway | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    const sessions = { store: 'redis', redisUrl: redis.url };
    allow = await startGateway(exampleConfig({ sessions, ...section('allow') }));
    deny = await startGateway(exampleConfig({ sessions, ...section('deny') }));
  }, 60_000);
  afterAll(async () => {
    redis?.resume();
    await allow?.stop();
    await deny?.stop();
    await redis?.stop();
  });
  const started = <T>(part: T | undefined): T => {
    if (part === undefined) throw new Error('pausedRedisPair: used outside its tests');
    return part;
  };
  return {
    get redis() {
      return started(redis);
    },
    get allow() {
      return started(allow);
    },
    get deny() {
      return started(deny);
    },
    call: (gw, id) => postStateless(gw, id, 'tools/call', { name: 'echo__echo', arguments: { text: 'x' } }),
    async whilePaused(run) {
      const paused = started(redis);
      paused.pause();
      try {
        return await run();
      } finally {
        paused.resume();
      }
    },
  };
}
