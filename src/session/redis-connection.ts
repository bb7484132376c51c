import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/**
 * The one place that turns configuration into Redis connections: a single node from a URL today;
 * Sentinel and Cluster belong here too, so that every user (session store, event store, bus)
 * gets them at once.
 */
export function createRedisClient(url: string, options: RedisOptions): Redis {
  return new Redis(url, options);
}

export interface RedisConnectionOptions {
  /** redis:// or rediss:// URL (may carry user, password and db). */
  url: string;
  /** CLIENT SETNAME, so an operator can tell the gateway's connections apart. */
  name: string;
  /**
   * A pub/sub subscriber: it queues SUBSCRIBEs until connected and re-subscribes after a
   * reconnect, so it keeps an offline queue (callers bound their own waits).
   */
  subscriber?: boolean;
  connectTimeoutMs?: number;
  /** Every command fails after this long without a reply: a hung Redis must not hang requests. */
  commandTimeoutMs?: number;
  /** Reconnect backoff: 50 ms doubling up to this, with jitter, forever. */
  maxBackoffMs?: number;
  log?: Logger;
}

/**
 * A connection that fails fast (no offline queue, one retry, connect and command timeouts) and
 * reconnects by itself with backoff. Errors are logged once per distinct message, not per retry.
 */
export function connectRedis(options: RedisConnectionOptions): Redis {
  const maxBackoffMs = options.maxBackoffMs ?? 2000;
  const redis = createRedisClient(options.url, {
    connectionName: options.name,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    ...(options.subscriber
      ? { enableOfflineQueue: true, maxRetriesPerRequest: null }
      : { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: options.commandTimeoutMs ?? 2000 }),
    retryStrategy: (attempt) => Math.round(Math.min(maxBackoffMs, 50 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2)),
  });
  let logged: string | undefined;
  redis.on('error', (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    if (message === logged) return;
    logged = message;
    options.log?.warn({ err: message, connection: options.name }, 'Redis connection error');
  });
  redis.on('ready', () => {
    if (logged !== undefined) options.log?.info({ connection: options.name }, 'Redis connection restored');
    logged = undefined;
  });
  return redis;
}

/** QUIT when connected (pending replies still arrive), else drop the connection. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // fall through
    }
  }
  redis.disconnect();
}
