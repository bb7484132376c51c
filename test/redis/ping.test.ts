/**
 * RedisPing as a module, against a real throwaway redis-server: a Redis that answers is
 * `answering`; one that keeps its connection but answers nothing (SIGSTOP) is not, once a PING
 * has waited `timeoutMs`; it is again as soon as a PING is answered; while the connection itself
 * is down nothing is asked; a PING still out is not doubled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisClient, type RedisClient } from '../../src/redis/connection.js';
import { RedisPing } from '../../src/redis/ping.js';
import { quietLog } from '../support/in-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
let client: RedisClient;

beforeAll(async () => {
  redis = await startRedis();
  client = createRedisClient(
    { url: redis.url },
    { maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 60_000 },
  );
  await until('connected', () => client.status === 'ready');
});

afterAll(async () => {
  redis?.resume();
  client?.disconnect();
  await redis?.stop();
});

/** A RedisPing whose timer never fires during a test: each check is the test's. */
function pinger(connected = () => client.status === 'ready') {
  let pings = 0;
  const ping = new RedisPing(() => (pings++, client.ping()), {
    intervalMs: 3_600_000,
    timeoutMs: 300,
    connected,
    log: quietLog(),
  });
  return { ping, pings: () => pings };
}

describe('RedisPing', () => {
  it('a Redis that answers is answering; a stopped one is not, once a PING waited timeoutMs; it is again when one is answered', async () => {
    const { ping } = pinger();
    try {
      expect(await ping.check()).toBe(true);
      redis.pause();
      expect(await ping.check()).toBe(false);
      expect(ping.answering).toBe(false);
      redis.resume();
      await until('a PING is answered again', () => ping.check());
      expect(ping.answering).toBe(true);
    } finally {
      redis.resume();
      ping.close();
    }
  });

  it('asks nothing while the connection is down, and does not double a PING still out', async () => {
    const down = pinger(() => false);
    expect(await down.ping.check()).toBe(true);
    expect(down.pings()).toBe(0);
    down.ping.close();
    const { ping, pings } = pinger();
    try {
      redis.pause();
      const first = ping.check();
      const second = ping.check();
      expect(await second).toBe(true); // the verdict so far: the first PING is still out
      expect(await first).toBe(false);
      expect(pings()).toBe(1);
    } finally {
      redis.resume();
      ping.close();
    }
  });
});
