import { Cluster, type Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { SUBSCRIBER_OPTIONS, backoff, type RedisClient } from './connection.js';

export interface RedisExpiryEventsOptions {
  /** The name of each expired key. */
  onExpired: (key: string) => void;
  /** Reconnect backoff of the subscriber connections. */
  maxBackoffMs?: number;
  log?: Logger;
}

/** One subscriber connection, listening to the node it is connected to. */
interface Source {
  readonly connection: Redis;
  /** Notifications on and subscribed (false while disconnected, or if CONFIG was refused). */
  active: boolean;
}

/** Whether a notify-keyspace-events value already publishes keyevent expiry notifications. */
function publishesExpiry(flags: string): boolean {
  return flags.includes('E') && (flags.includes('x') || flags.includes('A'));
}

/**
 * Expired-key events from Redis keyspace notifications (`__keyevent@<db>__:expired`).
 *
 * A notification is published only by the node that expired the key, so there is one subscriber
 * connection per node: the master for a single node or Sentinel (a duplicate of the client
 * follows the master through a failover), every node of a Cluster (replicas too: one promoted by
 * a failover starts publishing; nodes joining or leaving the cluster are followed through the
 * client's `+node`/`-node` events).
 *
 * Notifications are server configuration, lost when a node restarts or is replaced: on every
 * (re)connect each subscriber first turns them on for its node (CONFIG SET), then subscribes.
 * Where CONFIG is refused (many managed services), it still subscribes (an operator may have
 * turned them on) but `active` stays false, so the caller keeps relying on its own checks.
 */
export class RedisExpiryEvents {
  /** By the node (or client) each subscriber listens to. */
  readonly #sources = new Map<RedisClient, Source>();
  readonly #options: RedisExpiryEventsOptions;
  readonly #subscriberOptions: Partial<RedisOptions>;
  #closed = false;
  /** What was last logged, so each change is logged once. */
  #announced: 'keyspace' | 'local' | undefined;

  constructor(client: RedisClient, options: RedisExpiryEventsOptions) {
    this.#options = options;
    // Not on the request path: it may queue its commands until connected; it resubscribes itself
    // (after turning notifications on again), so ioredis's own resubscription is off.
    this.#subscriberOptions = {
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
      autoResubscribe: false,
      connectionName: 'mcp-gateway-events',
      ...SUBSCRIBER_OPTIONS,
      retryStrategy: backoff(options.maxBackoffMs ?? 2000),
    };
    if (client instanceof Cluster) {
      // A Cluster's node connections connect lazily and never reconnect: ours do both.
      const add = (node: Redis) =>
        this.#add(node, node.duplicate({ ...this.#subscriberOptions, lazyConnect: false, readOnly: false }));
      client.on('+node', add);
      client.on('-node', (node: Redis) => this.#remove(node));
      for (const node of client.nodes('all')) add(node);
    } else {
      this.#add(client, client.duplicate(this.#subscriberOptions));
    }
  }

  /** true while every node's notifications are on and listened to. */
  get active(): boolean {
    if (this.#closed || this.#sources.size === 0) return false;
    for (const source of this.#sources.values()) if (!source.active) return false;
    return true;
  }

  close(): void {
    this.#closed = true;
    for (const source of this.#sources.values()) source.connection.disconnect();
    this.#sources.clear();
  }

  #add(node: RedisClient, connection: Redis): void {
    if (this.#closed || this.#sources.has(node)) {
      connection.disconnect();
      return;
    }
    const source: Source = { connection, active: false };
    const channel = `__keyevent@${connection.options.db ?? 0}__:expired`;
    connection.on('error', () => undefined); // the command connection reports outages
    connection.on('close', () => (source.active = false));
    connection.on('ready', () => void this.#listen(source, channel));
    connection.on('message', (ch: string, key: string) => {
      if (ch === channel) this.#options.onExpired(key);
    });
    this.#sources.set(node, source);
  }

  #remove(node: RedisClient): void {
    this.#sources.get(node)?.connection.disconnect();
    this.#sources.delete(node);
  }

  async #listen(source: Source, channel: string): Promise<void> {
    const { connection } = source;
    let enabled = false;
    let reason: unknown;
    try {
      const reply = (await connection.config('GET', 'notify-keyspace-events')) as unknown as string[];
      const flags = reply[1] ?? '';
      if (!publishesExpiry(flags)) {
        let next = flags;
        if (!next.includes('E')) next += 'E';
        if (!next.includes('x') && !next.includes('A')) next += 'x';
        await connection.config('SET', 'notify-keyspace-events', next);
      }
      enabled = true;
    } catch (err) {
      reason = err;
    }
    try {
      await connection.subscribe(channel);
    } catch (err) {
      enabled = false;
      reason ??= err;
    }
    if (this.#closed || connection.status !== 'ready') return;
    source.active = enabled;
    this.#announce(reason);
  }

  #announce(reason: unknown): void {
    const now = this.active ? 'keyspace' : reason === undefined ? this.#announced : 'local';
    if (now === this.#announced || now === undefined) return;
    this.#announced = now;
    if (now === 'keyspace') this.#options.log?.info('session store: expiry events from Redis keyspace notifications');
    else {
      this.#options.log?.warn(
        { err: reason instanceof Error ? reason.message : String(reason) },
        'session store: cannot enable Redis keyspace notifications (CONFIG refused?); expiry events come only ' +
          "from this replica's own checks",
      );
    }
  }
}
