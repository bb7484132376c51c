import type { GatewayConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { Bus } from './bus.js';
import { MemoryBus } from './memory-bus.js';
import { LocalOwnerRegistry, type OwnerRegistry } from './owner-registry.js';
import { RedisBus } from './redis-bus.js';
import { SUBSCRIBER_OPTIONS, createRedisClient, logConnectionErrors, redisTarget } from '../redis/connection.js';
import { RedisOwnerRegistry } from './redis-owner-registry.js';

/** How replicas find each other: a bus and the owner records of per-session workers. */
export interface Replication {
  bus: Bus;
  owners: OwnerRegistry;
  close(): Promise<void>;
}

/** One replica alone (memory sessions), or many sharing Redis. */
export function createReplication(config: GatewayConfig, log: Logger): Replication {
  const { keyPrefix } = config.sessions;
  const target = redisTarget(config.sessions);
  if (!target) {
    const bus = new MemoryBus();
    return { bus, owners: new LocalOwnerRegistry(bus.replicaId), close: () => bus.close() };
  }
  // Owner look-ups sit on the call path: fail fast rather than queue behind an outage.
  const commands = createRedisClient(target, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
    commandTimeout: 2000,
    lazyConnect: false,
  });
  const publisher = createRedisClient(target, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  const subscriber = createRedisClient(target, { connectTimeout: 2000, ...SUBSCRIBER_OPTIONS });
  logConnectionErrors(commands, 'replication-commands', log);
  logConnectionErrors(publisher, 'replication-publisher', log);
  logConnectionErrors(subscriber, 'replication-subscriber', log);
  const bus = new RedisBus(publisher, subscriber, keyPrefix, log);
  const owners = new RedisOwnerRegistry(commands, { replicaId: bus.replicaId, keyPrefix, log });
  return {
    bus,
    owners,
    close: async () => {
      await owners.close();
      await bus.close();
      commands.disconnect();
    },
  };
}
