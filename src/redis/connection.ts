import { Cluster, Redis, type ChainableCommander, type ClusterOptions, type RedisOptions } from 'ioredis';
import { isIP } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { GatewayConfig, RedisClusterConfig, RedisSentinelConfig } from '../config/schema.js';
import { tlsConnectOptions } from '../config/tls-files.js';
import type { Logger } from '../observability/logger.js';
import { backoffDelay } from '../timing/backoff.js';

/**
 * A connection to the configured topology. Keyed commands, Lua scripts and pub/sub have the same
 * API on both; what differs (pipelines across slots, node-local keyspace notifications) is
 * handled by the users, see cluster/redis-owner-registry.ts and redis/expiry-events.ts.
 */
export type RedisClient = Redis | Cluster;

/** Where Redis is: a single node (URL), a master found through Sentinel, or a Cluster; and how to speak TLS to it. */
export type RedisTarget = ({ url: string } | RedisSentinelConfig | RedisClusterConfig) & { tls?: ConnectionOptions };

/** The Redis of `sessions`, or undefined when sessions are not kept in Redis. */
export function redisTarget(sessions: GatewayConfig['sessions']): RedisTarget | undefined {
  if (sessions.store !== 'redis') return undefined;
  const tls = tlsConnectOptions(sessions.tls);
  const withTls = <T extends object>(t: T): T & { tls?: ConnectionOptions } => (tls ? { ...t, tls } : t);
  if (sessions.redis) return withTls(sessions.redis);
  return sessions.redisUrl ? withTls({ url: sessions.redisUrl }) : undefined;
}

/** "host:port" or "[v6 address]:port" (validated by the config schema). */
function parseNode(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(address.slice(colon + 1)) };
}

/**
 * A Cluster with the same behaviour as a single connection given `options`: the retry strategy
 * becomes the cluster's (it reconnects when every node is lost) and the offline queue the
 * cluster's (fail fast while it is not ready); connect and command timeouts, retries per request
 * and the connection name apply to each node's connection.
 */
function clusterOptions(options: RedisOptions, password: string | undefined): ClusterOptions {
  const {
    retryStrategy,
    enableOfflineQueue,
    lazyConnect,
    host: _h,
    port: _p,
    path: _pa,
    sentinels: _s,
    readOnly: _r,
    ...node
  } = options;
  return {
    enableOfflineQueue: enableOfflineQueue ?? true,
    lazyConnect: lazyConnect ?? false,
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
    redisOptions: { ...node, ...(password === undefined ? {} : { password }) },
  };
}

/**
 * Options of every connection that only subscribes. No ready check (INFO): ioredis 5 writes a
 * SUBSCRIBE issued while it connects before its INFO (SUBSCRIBE may run while Redis loads), the
 * INFO then fails in subscriber mode, and the connection is dropped with every queued command
 * ("Connection in subscriber mode"). Pub/sub needs no check that loading has ended.
 */
export const SUBSCRIBER_OPTIONS = Object.freeze({ enableReadyCheck: false }) satisfies RedisOptions;

/**
 * The one place that turns configuration into Redis connections, so that every user (session
 * store, event store, bus, owner registry) gets each topology at once.
 */
export function createRedisClient(target: RedisTarget, base: RedisOptions): RedisClient {
  const options: RedisOptions = target.tls ? { ...base, tls: target.tls } : base;
  if ('url' in target) return new Redis(target.url, options);
  if ('sentinels' in target) {
    return new Redis({
      ...options,
      // The sentinels speak TLS too when the data nodes do.
      ...(target.tls ? { enableTLSForSentinelMode: true, sentinelTLS: target.tls } : {}),
      sentinels: target.sentinels,
      name: target.name,
      ...(target.password === undefined ? {} : { password: target.password }),
      ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
      ...(target.db === undefined ? {} : { db: target.db }),
      // Sentinel disconnects clients when it demotes a master, but a command may still reach the
      // old master first: READONLY means "ask the sentinels again", so reconnect (the command fails).
      reconnectOnError: (err) => err.message.startsWith('READONLY'),
    });
  }
  return new Cluster(target.cluster.map(parseNode), clusterOptions(options, target.password));
}

export interface RedisConnectionOptions {
  target: RedisTarget;
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
 * 50 ms doubling up to `maxMs`, with jitter: many replicas must not reconnect in step. ioredis counts attempts from 1.
 */
export function backoff(maxMs: number): (attempt: number) => number {
  return (attempt) => backoffDelay(attempt - 1, 50, maxMs);
}

/**
 * A connection that fails fast (no offline queue, one retry, connect and command timeouts) and
 * reconnects by itself with backoff. Errors are logged once per distinct message, not per retry.
 */
export function connectRedis(options: RedisConnectionOptions): RedisClient {
  const redis = createRedisClient(options.target, {
    connectionName: options.name,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    ...(options.subscriber
      ? { enableOfflineQueue: true, maxRetriesPerRequest: null }
      : { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: options.commandTimeoutMs ?? 2000 }),
    retryStrategy: backoff(options.maxBackoffMs ?? 2000),
  });
  if (options.log) logConnectionErrors(redis, options.name, options.log);
  return redis;
}

/**
 * Logs a connection's errors once per distinct message until it is ready again, not per retry (a
 * refused TLS client certificate or a wrong password repeats with every reconnect, and a Cluster
 * alternates several messages), and says when it is back.
 */
export function logConnectionErrors(redis: RedisClient, name: string, log: Logger): void {
  const logged = new Set<string>();
  const onError = (err: unknown) => {
    const message = connectionErrorMessage(err);
    if (logged.has(message)) return;
    logged.add(message);
    log.warn({ err: message, connection: name }, 'Redis connection error');
  };
  redis.on('error', onError);
  // A Cluster reports a node's errors apart from its own.
  if (redis instanceof Cluster) redis.on('node error', onError);
  redis.on('ready', () => {
    if (logged.size > 0) log.info({ connection: name }, 'Redis connection restored');
    logged.clear();
  });
}

/**
 * A Cluster's "Failed to refresh slots cache." hides why: the last node's error (a TLS alert, a
 * refused password) rides along as `lastNodeError`.
 */
export function connectionErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = (err as { lastNodeError?: unknown } | null)?.lastNodeError;
  return cause instanceof Error ? `${message} (last node error: ${cause.message})` : message;
}

/**
 * Why a Cluster cannot be reached, asked of its first seed node over a plain connection with the
 * same TLS and password: a Cluster client reports only "Connection is closed." for a refused
 * client certificate, a TLS alert or a wrong password. Undefined for other topologies (their
 * connection errors already say why) or when the seed answers.
 */
export async function diagnoseCluster(target: RedisTarget): Promise<string | undefined> {
  if (!('cluster' in target)) return undefined;
  const seed = target.cluster[0];
  if (!seed) return undefined;
  if (target.tls) {
    const refused = await tlsRefusal(parseNode(seed), target.tls);
    if (refused) return `${seed}: ${refused}`;
  }
  const probe = new Redis({
    ...parseNode(seed),
    ...(target.tls ? { tls: target.tls } : {}),
    ...(target.password === undefined ? {} : { password: target.password }),
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
  });
  let cause: string | undefined;
  probe.on('error', (err: unknown) => (cause = connectionErrorMessage(err)));
  try {
    await probe.connect();
    await probe.ping();
    return undefined;
  } catch (err) {
    return `${seed}: ${cause ?? connectionErrorMessage(err)}`;
  } finally {
    probe.disconnect();
  }
}

/**
 * A server that wants a client certificate says so with an alert after the handshake (TLS 1.3);
 * a client that writes first only sees the reset that follows. So: connect, write nothing, and
 * listen for a moment.
 */
function tlsRefusal(node: { host: string; port: number }, options: ConnectionOptions): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      ...options,
      host: node.host,
      port: node.port,
      servername: options.servername ?? (isIP(node.host) ? undefined : node.host),
    });
    const done = (why: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(undefined), 2000);
    socket.once('error', (err) => done(err.message));
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      setTimeout(() => done(undefined), 500);
    });
  });
}

/** QUIT when connected (pending replies still arrive), else drop the connection. */
export async function closeRedis(redis: RedisClient): Promise<void> {
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

/**
 * One single-key command per key, sent back to back (no round trip between them): one pipeline
 * on a single node or Sentinel master; on a Cluster, one per key, since a pipeline's keys must all
 * be served by one node. A reply per key, in order, as `pipeline.exec()` gives them.
 */
export async function perKey(
  redis: RedisClient,
  keys: readonly string[],
  add: (pipeline: ChainableCommander, key: string) => void,
): Promise<Array<[Error | null, unknown]>> {
  if (!(redis instanceof Cluster)) {
    const pipeline = redis.pipeline();
    for (const key of keys) add(pipeline, key);
    return (await pipeline.exec()) ?? [];
  }
  return Promise.all(
    keys.map(async (key): Promise<[Error | null, unknown]> => {
      const pipeline = redis.pipeline();
      add(pipeline, key);
      const [reply] = (await pipeline.exec()) ?? [];
      return reply ?? [new Error('Redis pipeline returned no reply'), null];
    }),
  );
}

/** A Redis error's code (or name), without addresses or credentials: fit for status and logs. */
export function errorCode(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; name?: unknown };
    if (typeof e.code === 'string') return e.code;
    if (typeof e.name === 'string') return e.name;
  }
  return 'Error';
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
