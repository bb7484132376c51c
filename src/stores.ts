// Wiring only: the stores beside the sessions (sessions, SSE events, tokens held for users,
// used requestStates, tasks, tool search indexes), memory or Redis as the config says, and the
// start-up deadline of those that need Redis.
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
import { connectRedis, diagnoseCluster, redisTarget, type RedisClient, type RedisTarget } from './redis/connection.js';
import { timeStoreEnds } from './transport/session-manager.js';
import { RedisIndexShare } from './tool-search/redis-index-share.js';
import { GATEWAY_VERSION } from './version.js';

type CreatedStore = { store: SessionStore; status?: () => RedisStoreStatus; start(): Promise<void> };

/**
 * The session store, and the state of its connection when it has one (for /readyz); the sessions it ends are timed on
 * `diagnostics`.
 */
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

/**
 * A side store's own Redis connection. Each keeps no offline queue (it fails fast), so one used
 * before it is connected fails: start-up waits for every one (within REDIS_START_DEADLINE_MS),
 * and /readyz counts those whose requests fail without it (`readiness`).
 */
export interface SideConnection {
  /** As /readyz names it (`store.notReady`). */
  name: string;
  redis: RedisClient;
  readiness: boolean;
}

function sideConnection(into: SideConnection[], target: RedisTarget, name: string, log: Logger, readiness = true) {
  const redis = connectRedis({ target, name: `mcp-gateway-${name}`, log });
  into.push({ name, redis, readiness });
  return redis;
}

/** Where SSE events are recorded: beside the sessions (Redis when they are in Redis). */
function createEventStore(config: GatewayConfig, log: Logger, into: SideConnection[]): EventStore {
  const limits = { maxEvents: config.resumability.maxEvents, maxAgeMs: config.resumability.maxAgeSeconds * 1000 };
  const target = redisTarget(config.sessions);
  if (target) {
    // Not counted by /readyz: without Redis, streams degrade (events go out without ids) rather than fail.
    const redis = sideConnection(into, target, 'events', log, false);
    return new RedisEventStore(redis, { ...limits, keyPrefix: config.sessions.keyPrefix });
  }
  return new MemoryEventStore(limits);
}

/**
 * Where tokens held for users live (exchanged tokens, users' own OAuth tokens): beside the sessions, sealed with
 * `secrets.keys`. Made when an upstream holds such tokens, and also when one could be added by a reload (auth on,
 * and a store that can seal: memory, or Redis with `secrets.keys`, which only a restart changes). Else none.
 */
function createTokenStore(config: GatewayConfig, log: Logger, into: SideConnection[]): TokenStore | undefined {
  if (!tokenStoreWanted(config)) return undefined;
  const cipher = new TokenCipher(secretKeys(config.secrets));
  const target = redisTarget(config.sessions);
  const { keyPrefix } = config.sessions;
  if (target) return new RedisTokenStore(sideConnection(into, target, 'tokens', log), cipher, keyPrefix);
  return new MemoryTokenStore(cipher);
}

export function tokenStoreWanted(config: GatewayConfig): boolean {
  const holds = (grant: string | undefined) => grant === 'token-exchange' || grant === 'authorization-code';
  if (config.upstreams.some((u) => u.transport !== 'stdio' && holds(u.oauth?.grant))) return true;
  return (
    config.auth.mode !== 'none' &&
    (redisTarget(config.sessions) === undefined || (config.secrets?.keys ?? []).length > 0)
  );
}

/**
 * Where used requestStates are recorded: in Redis beside the sessions (a state used on one
 * replica is refused on the others), else in this replica's memory. Redis only when some
 * upstream is remote: a stdio upstream never speaks 2026-07-28.
 */
function createSpentStates(config: GatewayConfig, log: Logger, into: SideConnection[]): SpentStates {
  const target = redisTarget(config.sessions);
  if (target && config.upstreams.some((u) => u.transport !== 'stdio')) {
    return new RedisSpentStates(sideConnection(into, target, 'spent-states', log), config.sessions.keyPrefix);
  }
  return new MemorySpentStates();
}

/**
 * Where tasks live: beside the sessions (Redis when they are in Redis, so any replica answers
 * for any task). None when no upstream runs tools as tasks.
 */
function createTaskStore(config: GatewayConfig, log: Logger, into: SideConnection[]): TaskStore | undefined {
  if (!namesTaskTools(config.upstreams)) return undefined;
  const target = redisTarget(config.sessions);
  if (target) return new RedisTaskStore(sideConnection(into, target, 'tasks', log), config.sessions.keyPrefix);
  return new MemoryTaskStore();
}

/**
 * Where large tool search indexes are kept for the other replicas (tool-search/index-share.ts): in
 * Redis beside the sessions, when some endpoint has `toolSearch` at start (a reload that first
 * turns it on shares from the next start: until then each replica builds its own). Else none.
 */
function createIndexShare(config: GatewayConfig, log: Logger, into: SideConnection[]): RedisIndexShare | undefined {
  const target = redisTarget(config.sessions);
  const searched = config.toolSearch !== undefined || config.servers.some((s) => s.toolSearch !== undefined);
  if (!target || !searched) return undefined;
  // An index is megabytes: a command timeout to match. Not counted by /readyz: without it, each replica builds.
  const redis = connectRedis({ target, name: 'mcp-gateway-tool-indexes', log, commandTimeoutMs: 10_000 });
  into.push({ name: 'tool-indexes', redis, readiness: false });
  return new RedisIndexShare(redis, `${config.sessions.keyPrefix}toolindex:${GATEWAY_VERSION}:`, log);
}

/** The stores beside the session store: each exists (or not) by what the config asks for. */
export interface SideStores {
  events: EventStore;
  spentStates: SpentStates;
  tokens?: TokenStore;
  tasks?: TaskStore;
  toolIndexes?: RedisIndexShare;
  /** Their Redis connections (none in memory). */
  connections: readonly SideConnection[];
}

export function createSideStores(config: GatewayConfig, log: Logger): SideStores {
  const connections: SideConnection[] = [];
  const tokens = createTokenStore(config, log, connections);
  const tasks = createTaskStore(config, log, connections);
  const events = createEventStore(config, log, connections);
  const spentStates = createSpentStates(config, log, connections);
  const toolIndexes = createIndexShare(config, log, connections);
  return {
    events,
    spentStates,
    ...(tokens ? { tokens } : {}),
    ...(tasks ? { tasks } : {}),
    ...(toolIndexes ? { toolIndexes } : {}),
    connections,
  };
}

/** Resolves once every side connection is ready (start-up bounds it: withinStartDeadline). */
export async function sideStoresReady(side: SideStores): Promise<void> {
  // (Not events.once: it rejects on the first 'error', and a connection retries through its errors.)
  const ready = (redis: RedisClient): Promise<unknown> =>
    redis.status === 'ready' ? Promise.resolve() : new Promise((done) => redis.once('ready', done));
  await Promise.all(side.connections.map(({ redis }) => ready(redis)));
}

/** The session store's status as /readyz reads it, unavailable too while a side connection that counts is not ready. */
export function withSideConnections(status: () => RedisStoreStatus, side: SideStores): () => RedisStoreStatus {
  const counted = side.connections.filter((c) => c.readiness);
  return () => {
    const s = status();
    const notReady = counted.filter((c) => c.redis.status !== 'ready').map((c) => c.name);
    return notReady.length === 0 ? s : { ...s, state: s.state === 'closed' ? 'closed' : 'unavailable', notReady };
  };
}

/** In the shutdown order: the sessions' own store closes before these. */
export function closeSideStores(side: SideStores): Array<() => unknown> {
  return [
    () => side.events.close(),
    () => side.tokens?.close(),
    () => side.spentStates.close(),
    () => side.tasks?.close(),
    () => side.toolIndexes?.close(),
  ];
}
