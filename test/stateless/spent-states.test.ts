/**
 * The record of used requestStates: first use wins, a second one is refused, in memory (one
 * replica) and in Redis (every replica: two connections stand for two replicas), where each
 * key lives as long as its state; a Redis that does not answer refuses the state (typed,
 * retryable) rather than let an unchecked replay through. A real redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { connectRedis, type RedisClient } from '../../src/redis/connection.js';
import { MemorySpentStates, RedisSpentStates } from '../../src/session/spent-states.js';
import { startRedis, type RedisServer } from '../support/redis.js';

let redis: RedisServer;

/** A connection of the gateway's kind, once it is up (it keeps no offline queue). */
async function connected(name: string, commandTimeoutMs?: number): Promise<RedisClient> {
  const client = connectRedis({ target: { url: redis.url }, name, ...(commandTimeoutMs ? { commandTimeoutMs } : {}) });
  if (client.status !== 'ready') await new Promise((r) => client.once('ready', r));
  return client;
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

describe('spent states', () => {
  it('memory: the first use wins', async () => {
    const spent = new MemorySpentStates();
    expect(await spent.spend('n1', Date.now() + 60_000)).toBe(true);
    expect(await spent.spend('n1', Date.now() + 60_000)).toBe(false);
    expect(await spent.spend('n2', Date.now() + 60_000)).toBe(true);
  });

  it('Redis: a nonce used through one connection is refused through another, and expires with its state', async () => {
    const a = new RedisSpentStates(await connected('spent-a'), 'test:');
    const b = new RedisSpentStates(await connected('spent-b'), 'test:');
    try {
      expect(await a.spend('n1', Date.now() + 60_000)).toBe(true);
      expect(await b.spend('n1', Date.now() + 60_000)).toBe(false);
      expect(await a.spend('n1', Date.now() + 60_000)).toBe(false);
      const ttl = Number((await redis.command('PTTL', 'test:spent:n1')).replace(/^:/, ''));
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      const settled = await Promise.all([a.spend('n2', Date.now() + 60_000), b.spend('n2', Date.now() + 60_000)]);
      expect(settled.sort()).toEqual([false, true]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('Redis not answering: the state is refused with SESSION_STORE_UNAVAILABLE', async () => {
    const spent = new RedisSpentStates(await connected('spent-c', 300), 'test:');
    try {
      expect(await spent.spend('warm', Date.now() + 60_000)).toBe(true);
      redis.pause();
      const err = await spent.spend('n3', Date.now() + 60_000).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).type).toBe('SESSION_STORE_UNAVAILABLE');
    } finally {
      redis.resume();
      await spent.close();
    }
  });
});
