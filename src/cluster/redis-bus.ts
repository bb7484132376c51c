import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { Bus } from './bus.js';
import type { RedisClient } from '../redis/connection.js';

/**
 * ioredis's Cluster subscribes through a connection of its own that always checks readiness with
 * INFO (our SUBSCRIBER_OPTIONS do not reach it). A SUBSCRIBE written while that connection comes
 * up goes before the INFO, the INFO then fails in subscriber mode, and ioredis refuses the
 * SUBSCRIBE with this message and reconnects (seen once in CI, at start-up). Sent again, it passes.
 */
const SUBSCRIBER_MODE = 'Connection in subscriber mode';
const SUBSCRIBE_ATTEMPTS = 5;
const SUBSCRIBE_RETRY_MS = 50;

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
      const created = new Set<(message: string) => void>();
      this.#handlers.set(full, (set = created));
      try {
        await this.#subscribe(full);
      } catch (err) {
        // Not subscribed: the next subscriber to this channel tries again.
        if (this.#handlers.get(full) === created) this.#handlers.delete(full);
        throw err;
      }
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

  async #subscribe(channel: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.subscriber.subscribe(channel);
        return;
      } catch (err) {
        const transient = err instanceof Error && err.message.startsWith(SUBSCRIBER_MODE);
        if (!transient || attempt >= SUBSCRIBE_ATTEMPTS) throw err;
        this.log?.debug({ channel, attempt }, 'bus subscribe refused while its connection came up; trying again');
        await new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_RETRY_MS * attempt));
      }
    }
  }

  async close(): Promise<void> {
    this.#handlers.clear();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
