import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { Bus } from './bus.js';
import type { RedisClient } from '../redis/connection.js';

/**
 * Redis pub/sub between replicas. One connection publishes, one subscribes to every channel
 * this replica listens on (a subscribed connection can do nothing else).
 *
 * On a Cluster this is classic pub/sub: a message published on any node reaches subscribers on
 * every node (over the cluster bus), and ioredis moves the subscriber to another node if its own
 * fails. Sharded pub/sub (SPUBLISH, Redis 7) would keep a session's messages on its slot's
 * shard; it is not used: see "Running several replicas" in the README.
 */
export class RedisBus implements Bus {
  readonly replicaId = randomUUID();
  readonly #handlers = new Map<string, Set<(message: string) => void>>();

  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly prefix: string,
    private readonly log?: Logger,
  ) {
    subscriber.on('message', (channel: string, message: string) => {
      const handlers = this.#handlers.get(channel);
      if (!handlers) return;
      for (const h of handlers) {
        try {
          h(message);
        } catch (err) {
          this.log?.error({ err, channel }, 'bus handler failed');
        }
      }
    });
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.publisher.publish(this.prefix + channel, message);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    const full = this.prefix + channel;
    let set = this.#handlers.get(full);
    if (!set) {
      this.#handlers.set(full, (set = new Set()));
      await this.subscriber.subscribe(full);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.#handlers.get(full) === set) {
        this.#handlers.delete(full);
        await this.subscriber.unsubscribe(full).catch(() => undefined);
      }
    };
  }

  async close(): Promise<void> {
    this.#handlers.clear();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
