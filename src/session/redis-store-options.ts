/** How the Redis session store is set up, and how it reports its connection (for /readyz and metrics). */
import type { Logger } from '../observability/logger.js';
import type { RedisTarget } from '../redis/connection.js';
import type { SessionLimits } from './session-store.js';

export interface RedisSessionStoreOptions {
  /** A single node (URL), a Sentinel master or a Cluster. */
  target: RedisTarget;
  /** Prefix of every key this store writes. Must not contain `{` or `}` (hash tags). */
  keyPrefix?: string;
  ttlSeconds: number;
  /** Refresh a session's TTL only when its last refresh is older than this fraction of the ttl. */
  refreshFraction?: number;
  /** Upper bound on the local map of last-refresh times (oldest entries are forgotten first). */
  maxTracked?: number;
  /** How often tracked sessions past their possible expiry are checked. */
  sweepIntervalMs?: number;
  /**
   * Subscribe to keyspace expiry notifications (and try to enable them with CONFIG SET), on every node of a Cluster.
   */
  keyspaceEvents?: boolean;
  connectTimeoutMs?: number;
  /** Every command fails after this long without a reply (a hung Redis must not hang requests). */
  commandTimeoutMs?: number;
  /** Reconnect backoff: 50 ms doubling up to this, with jitter, forever. */
  maxBackoffMs?: number;
  /** Cluster only: how often the cluster is asked for its state (redis/cluster-health.ts). */
  clusterProbeIntervalMs?: number;
  /** limits.maxSessions and friends, across every replica sharing this Redis. */
  limits?: SessionLimits;
  /** Single node or Sentinel: a timed PING (redis/ping.ts); a Cluster is watched by its own probe instead. */
  health?: { intervalMs: number; timeoutMs: number };
  log?: Logger;
}

export interface RedisStoreStatus {
  state: 'ready' | 'unavailable' | 'closed';
  /** ioredis connection status (connecting, connect, ready, reconnecting, end, …). */
  connection: string;
  /** How expiry is noticed: Redis keyspace notifications, or only by this replica's own checks. */
  expiryEvents: 'keyspace' | 'local';
  /** Error code (or name) of the last connection error, without addresses or credentials. */
  lastError?: string;
  /** Cluster only: the cluster's own state, and masters whose slots cannot be served now. */
  cluster?: { state: 'ok' | 'fail' | 'unknown'; failingMasters: string[] };
  /** Connections beside the session store's own (stores.ts: side connections) not ready: state is 'unavailable'. */
  notReady?: string[];
}
