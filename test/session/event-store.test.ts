/**
 * The EventStore contract against both stores (Redis: a real redis-server started by this file
 * on a free loopback port), then what only Redis shows: key names hash-tagged per session, and
 * failing fast (never hanging) while Redis is down.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../src/streams/memory-event-store.js';
import { connectRedis, type RedisClient } from '../../src/redis/connection.js';
import { RedisEventStore } from '../../src/streams/redis-event-store.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { eventStoreContract } from './event-store-contract.js';

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

async function ready(connection: RedisClient): Promise<RedisClient> {
  if (connection.status === 'ready') return connection;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Redis not ready within 5 s')), 5000);
    connection.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return connection;
}

async function redisStore(
  limits: { maxEvents: number; maxAgeMs: number },
  keyPrefix = `t-${randomUUID().slice(0, 8)}:`,
): Promise<RedisEventStore> {
  const connection = await ready(connectRedis({ target: { url: redis.url }, name: 'event-store-test' }));
  return new RedisEventStore(connection, { ...limits, keyPrefix });
}

eventStoreContract('MemoryEventStore', (limits) => new MemoryEventStore(limits));
eventStoreContract('RedisEventStore', (limits) => redisStore(limits));

describe('RedisEventStore', () => {
  it("keeps a session's streams under keys hash-tagged with the session id, with a TTL of maxAge", async () => {
    const store = await redisStore({ maxEvents: 100, maxAgeMs: 30_000 }, 'evt:');
    try {
      const sid = randomUUID();
      await store.append(sid, 'abc', undefined);
      await store.append(sid, 'get', { jsonrpc: '2.0', method: 'notifications/message', params: {} });
      expect(await redis.command('EXISTS', `evt:{${sid}}:events:abc`)).toBe(':1\r\n');
      expect(await redis.command('TYPE', `evt:{${sid}}:events:get`)).toBe('+stream\r\n');
      const ttl = Number(/:(\d+)/.exec(await redis.command('PTTL', `evt:{${sid}}:events:get`))![1]);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
    } finally {
      await store.close();
    }
  });

  it('fails fast while Redis is down and works again once it is back', async () => {
    const store = await redisStore({ maxEvents: 100, maxAgeMs: 30_000 });
    try {
      const sid = randomUUID();
      const before = await store.append(sid, 'a', undefined);
      await redis.stop();
      const t = Date.now();
      await expect(store.append(sid, 'a', undefined)).rejects.toThrow();
      await expect(store.replay(sid, 'a', before!.position)).rejects.toThrow();
      expect(Date.now() - t).toBeLessThan(3000);
      await redis.start();
      let appended;
      for (let i = 0; i < 100 && !appended; i++) {
        appended = await store.append(sid, 'a', undefined).catch(() => undefined);
        if (!appended) await new Promise((r) => setTimeout(r, 50));
      }
      expect(appended).toBeDefined(); // (the restarted Redis is empty: a new stream)
    } finally {
      await store.close();
      if (!redis.running) await redis.start();
    }
  });
});
