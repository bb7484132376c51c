/**
 * RedisOwnerRegistry as a module: which replica runs a (scope, upstream) pair's per-session
 * worker, in a real throwaway redis-server, with two registries standing for two replicas. A
 * claim is first come; a live owner keeps it; a dead owner (no heartbeat) is taken over, and only
 * from the owner named; release drops only the releaser's own claim; close() drops its heartbeat
 * and its claims.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisOwnerRegistry } from '../../src/cluster/redis-owner-registry.js';
import { createRedisClient, type RedisClient } from '../../src/redis/connection.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
const clients: RedisClient[] = [];
const registries: RedisOwnerRegistry[] = [];
let prefix = '';

beforeAll(async () => {
  redis = await startRedis();
});

// Each test's keys apart from the others'.
beforeEach(() => {
  prefix = `owners-${randomUUID()}:`;
});

afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
  for (const c of clients.splice(0)) c.disconnect();
});

afterAll(async () => {
  await redis?.stop();
});

/** One replica's registry, on a connection of its own, heartbeat seen by the others. */
async function replica(name: string): Promise<RedisOwnerRegistry> {
  const client = createRedisClient(
    { url: redis.url },
    { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, commandTimeout: 2000 },
  );
  clients.push(client);
  const registry = new RedisOwnerRegistry(client, { replicaId: `${name}-${randomUUID()}`, keyPrefix: prefix });
  registries.push(registry);
  await until(`${name}'s heartbeat`, async () =>
    (await redis.command('EXISTS', `${prefix}replica:${registry.replicaId}`)).startsWith(':1'),
  );
  return registry;
}

const ownerKey = (scope: string, upstream: string) => `${prefix}{${scope}}:owner:${upstream}`;

describe('RedisOwnerRegistry', () => {
  it('the first claim wins; a live owner keeps the pair whoever asks', async () => {
    const a = await replica('a');
    const b = await replica('b');
    expect(await a.claim('s1', 'up')).toBe(a.replicaId);
    expect(await b.claim('s1', 'up')).toBe(a.replicaId);
    expect(await b.ownerOf('s1', 'up')).toBe(a.replicaId);
    expect(await a.claim('s1', 'up')).toBe(a.replicaId);
    // Another upstream of the same scope is a pair of its own.
    expect(await b.claim('s1', 'other')).toBe(b.replicaId);
    expect(await a.isAlive(b.replicaId)).toBe(true);
    expect(await a.isAlive('never-was')).toBe(false);
  });

  it('a pair whose owner has no heartbeat is taken over by the next claim', async () => {
    const b = await replica('b');
    await redis.command('SET', ownerKey('s2', 'up'), 'dead-replica');
    expect(await b.claim('s2', 'up')).toBe(b.replicaId);
    expect(await b.ownerOf('s2', 'up')).toBe(b.replicaId);
    // The claim now lives as long as b's heartbeats keep it.
    expect(Number((await redis.command('PTTL', ownerKey('s2', 'up'))).slice(1))).toBeGreaterThan(0);
  });

  it('a take-over names the dead owner: one that has changed meanwhile is not taken', async () => {
    const a = await replica('a');
    await redis.command('SET', ownerKey('s3', 'up'), 'replica-x');
    expect(await a.takeOver('s3', 'up', 'replica-y')).toBe('replica-x');
    expect(await a.ownerOf('s3', 'up')).toBe('replica-x');
    expect(await a.takeOver('s3', 'up', 'replica-x')).toBe(a.replicaId);
  });

  it("release drops only the releaser's own claim", async () => {
    const a = await replica('a');
    const b = await replica('b');
    await a.claim('s4', 'up');
    await b.release('s4', 'up');
    expect(await b.ownerOf('s4', 'up')).toBe(a.replicaId);
    await a.release('s4', 'up');
    expect(await b.ownerOf('s4', 'up')).toBeUndefined();
    expect(await b.claim('s4', 'up')).toBe(b.replicaId);
  });

  it('close() drops its heartbeat and its claims: the others see it gone and claim its pairs', async () => {
    const a = await replica('a');
    const b = await replica('b');
    await a.claim('s5', 'up');
    await registries.splice(registries.indexOf(a), 1)[0]!.close();
    expect(await b.isAlive(a.replicaId)).toBe(false);
    expect(await b.ownerOf('s5', 'up')).toBeUndefined();
    expect(await b.claim('s5', 'up')).toBe(b.replicaId);
  });
});
