// Wiring only: the stores beside the sessions (sessions, SSE events, tokens held for users),
// memory or Redis as the config says, and the start-up deadline of those that need Redis.
import type { SpentStates } from './contracts/spent-states.js';
import { MemorySpentStates, RedisSpentStates } from './session/spent-states.js';
import type { GatewayConfig } from './config/schema.js';
import { secretKeys } from './config/secrets.js';
import { namesTaskTools } from './config/tasks.js';
import type { DataPathEvents } from './observability/events.js';
import type { Logger } from './observability/logger.js';
import type { EventStore } from './streams/event-store.js';
import { MemoryEventStore } from './streams/memory-event-store.js';
import { RedisEventStore } from './streams/redis-event-store.js';
import { MemorySessionStore } from './session/memory-store.js';
import { CachedSessionStore } from './session/cached-store.js';
import { RedisSessionStore, type RedisStoreStatus } from './session/redis-store.js';
import type { SessionLimits, SessionStore } from './session/session-store.js';
import { TokenCipher } from './session/token-store.js';
import { MemoryTokenStore } from './session/memory-token-store.js';
import { RedisTokenStore } from './session/redis-token-store.js';
import type { TokenStore } from './contracts/token-store.js';
import type { TaskStore } from './contracts/task-store.js';
import { MemoryTaskStore } from './session/memory-task-store.js';
import { RedisTaskStore } from './session/redis-task-store.js';
import type { Bus } from './cluster/bus.js';
import { announceSessionChange, subscribeSessionChanges } from './cluster/session-changes.js';
import { connectRedis, diagnoseCluster, redisTarget, type RedisTarget } from './redis/connection.js';
import { timeStoreEnds } from './transport/session-manager.js';

type CreatedStore = { store: SessionStore; status?: () => RedisStoreStatus; start(): Promise<void> };

/** The session store, and the state of its connection when it has one (for /readyz); the sessions it ends are timed on `diagnostics`. */
export function createStore(config: GatewayConfig, log: Logger, bus: Bus, diagnostics: DataPathEvents): CreatedStore {
  const created = sessionStore(config, log, bus);
  timeStoreEnds(created.store, diagnostics);
  return created;
}

function sessionStore(config: GatewayConfig, log: Logger, bus: Bus): CreatedStore {
  const { store, keyPrefix, ttlSeconds, cacheMs, health } = config.sessions;
  const limits: SessionLimits = {
    maxSessions: config.limits.maxSessions,
    maxPerPrincipal: config.limits.maxSessionsPerPrincipal,
    evictIdleMs: config.limits.sessionEvictionIdleSeconds * 1000,
  };
  if (store === 'redis') {
    const target = redisTarget(config.sessions);
    if (!target) throw new Error('sessions.redisUrl or sessions.redis is required when sessions.store is "redis"');
    const redis = new RedisSessionStore({ target, keyPrefix, ttlSeconds, limits, health, log });
    if (cacheMs === 0) return { store: redis, status: () => redis.status(), start: async () => undefined };
    const cached = new CachedSessionStore(redis, {
      maxAgeMs: cacheMs,
      healthy: () => redis.ready,
      announce: (id) => announceSessionChange(bus, id),
    });
    return {
      store: cached,
      status: () => redis.status(),
      // Every replica drops its copy of a session another replica changed or deleted.
      start: async () => {
        await subscribeSessionChanges(bus, (id) => cached.invalidate(id));
      },
    };
  }
  return { store: new MemorySessionStore({ ttlSeconds, limits }), start: async () => undefined };
}

/**
 * Start-up subscribes to the bus. A single Redis gives up on a command after its retries, but a
 * Cluster client queues commands until it reaches the cluster, however long that takes: a replica
 * that cannot reach its Redis must fail its start and say why, not hang in it.
 */
const REDIS_START_DEADLINE_MS = 15_000;

export async function withinStartDeadline(start: Promise<void>, target: RedisTarget | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const said = `Redis was not reachable within ${REDIS_START_DEADLINE_MS / 1000} s of start`;
      void (target ? diagnoseCluster(target) : Promise.resolve(undefined)).then(
        (why) => reject(new Error(why ? `${said}: ${why}` : `${said} (see the Redis connection errors logged above)`)),
        () => reject(new Error(said)),
      );
    }, REDIS_START_DEADLINE_MS);
  });
  try {
    await Promise.race([start, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where SSE events are recorded: beside the sessions (Redis when they are in Redis). */
export function createEventStore(config: GatewayConfig, log: Logger): EventStore {
  const limits = { maxEvents: config.resumability.maxEvents, maxAgeMs: config.resumability.maxAgeSeconds * 1000 };
  const target = redisTarget(config.sessions);
  if (target) {
    return new RedisEventStore(connectRedis({ target, name: 'mcp-gateway-events', log }), { ...limits, keyPrefix: config.sessions.keyPrefix });
  }
  return new MemoryEventStore(limits);
}

/**
 * Where tokens held for users live (exchanged tokens, users' own OAuth tokens): beside the sessions, sealed with
 * `secrets.keys`. Made when an upstream holds such tokens, and also when one could be added by a reload (auth on,
 * and a store that can seal: memory, or Redis with `secrets.keys`, which only a restart changes). Else none.
 */
export function createTokenStore(config: GatewayConfig, log: Logger): TokenStore | undefined {
  if (!tokenStoreWanted(config)) return undefined;
  const cipher = new TokenCipher(secretKeys(config.secrets));
  const target = redisTarget(config.sessions);
  if (target) return new RedisTokenStore(connectRedis({ target, name: 'mcp-gateway-tokens', log }), cipher, config.sessions.keyPrefix);
  return new MemoryTokenStore(cipher);
}

export function tokenStoreWanted(config: GatewayConfig): boolean {
  const holds = (grant: string | undefined) => grant === 'token-exchange' || grant === 'authorization-code';
  if (config.upstreams.some((u) => u.transport !== 'stdio' && holds(u.oauth?.grant))) return true;
  return config.auth.mode !== 'none' && (redisTarget(config.sessions) === undefined || (config.secrets?.keys ?? []).length > 0);
}

/**
 * Where used requestStates are recorded: in Redis beside the sessions (a state used on one
 * replica is refused on the others), else in this replica's memory. Redis only when some
 * upstream is remote: a stdio upstream never speaks 2026-07-28.
 */
export function createSpentStates(config: GatewayConfig, log: Logger): SpentStates {
  const target = redisTarget(config.sessions);
  if (target && config.upstreams.some((u) => u.transport !== 'stdio')) return new RedisSpentStates(connectRedis({ target, name: 'mcp-gateway-spent-states', log }), config.sessions.keyPrefix);
  return new MemorySpentStates();
}

/**
 * Where tasks live: beside the sessions (Redis when they are in Redis, so any replica answers
 * for any task). None when no upstream runs tools as tasks.
 */
export function createTaskStore(config: GatewayConfig, log: Logger): TaskStore | undefined {
  if (!namesTaskTools(config.upstreams)) return undefined;
  const target = redisTarget(config.sessions);
  if (target) return new RedisTaskStore(connectRedis({ target, name: 'mcp-gateway-tasks', log }), config.sessions.keyPrefix);
  return new MemoryTaskStore();
}

/** The stores beside the session store: each exists (or not) by what the config asks for. */
export interface SideStores {
  events: EventStore;
  spentStates: SpentStates;
  tokens?: TokenStore;
  tasks?: TaskStore;
}

export function createSideStores(config: GatewayConfig, log: Logger): SideStores {
  const tokens = createTokenStore(config, log);
  const tasks = createTaskStore(config, log);
  return { events: createEventStore(config, log), spentStates: createSpentStates(config, log), ...(tokens ? { tokens } : {}), ...(tasks ? { tasks } : {}) };
}

/** In the shutdown order: the sessions' own store closes before these. */
export function closeSideStores(side: SideStores): Array<() => unknown> {
  return [() => side.events.close(), () => side.tokens?.close(), () => side.spentStates.close(), () => side.tasks?.close()];
}
