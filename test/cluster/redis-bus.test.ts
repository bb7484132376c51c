/**
 * RedisBus as a module: pub/sub between replicas over a real throwaway redis-server, each bus on
 * connections of its own. A message reaches every subscribed handler on other replicas, under
 * the bus's key prefix only; a handler that throws does not keep the others from it; the last
 * handler of a channel gone, the subscriber connection unsubscribes from it in Redis.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisBus } from '../../src/cluster/redis-bus.js';
import { SUBSCRIBER_OPTIONS, createRedisClient } from '../../src/redis/connection.js';
import { quietLog } from '../support/in-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
const buses: RedisBus[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterEach(async () => {
  await Promise.all(buses.splice(0).map((b) => b.close()));
});

afterAll(async () => {
  await redis?.stop();
});

function bus(prefix: string): RedisBus {
  const publisher = createRedisClient({ url: redis.url }, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  const subscriber = createRedisClient({ url: redis.url }, { connectTimeout: 2000, ...SUBSCRIBER_OPTIONS });
  const b = new RedisBus(publisher, subscriber, prefix, quietLog());
  buses.push(b);
  return b;
}

/** How many connections Redis has subscribed to `channel` (PUBSUB NUMSUB). */
async function subscribers(channel: string): Promise<number> {
  const admin = createRedisClient({ url: redis.url }, { maxRetriesPerRequest: 1 });
  try {
    const [, count] = (await admin.pubsub('NUMSUB', channel)) as [string, number];
    return count;
  } finally {
    admin.disconnect();
  }
}

describe('RedisBus', () => {
  it('carries a message to every handler of the channel on other replicas, under its prefix only', async () => {
    const prefix = `bus-${randomUUID()}:`;
    const [a, b] = [bus(prefix), bus(prefix)];
    const other = bus(`other-${randomUUID()}:`);
    const heard: string[] = [];
    await b.subscribe('news', (m) => heard.push(`b1 ${m}`));
    await b.subscribe('news', (m) => heard.push(`b2 ${m}`));
    await other.subscribe('news', (m) => heard.push(`other ${m}`));
    await a.publish('news', 'hello');
    await until('both handlers heard it', () => heard.length >= 2);
    // A marker after it: once the other prefix's handler would have had "hello", it has had "marker" too.
    await other.publish('news', 'marker');
    await until('the marker', () => heard.includes('other marker'));
    expect(heard.sort()).toEqual(['b1 hello', 'b2 hello', 'other marker']);
  });

  it('a handler that throws does not keep the message from the others', async () => {
    const prefix = `bus-${randomUUID()}:`;
    const [a, b] = [bus(prefix), bus(prefix)];
    const heard: string[] = [];
    await b.subscribe('c', () => {
      throw new Error('handler failed');
    });
    await b.subscribe('c', (m) => heard.push(m));
    await a.publish('c', 'one');
    await a.publish('c', 'two');
    await until('both messages', () => heard.length === 2);
    expect(heard).toEqual(['one', 'two']);
  });

  it('stays subscribed while any handler is, and unsubscribes in Redis when the last one goes', async () => {
    const prefix = `bus-${randomUUID()}:`;
    const [a, b] = [bus(prefix), bus(prefix)];
    const heard: string[] = [];
    const first = await b.subscribe('u', (m) => heard.push(`first ${m}`));
    const second = await b.subscribe('u', (m) => heard.push(`second ${m}`));
    expect(await subscribers(`${prefix}u`)).toBe(1);
    await first();
    expect(await subscribers(`${prefix}u`)).toBe(1);
    await a.publish('u', 'still');
    await until('the remaining handler heard it', () => heard.length === 1);
    expect(heard).toEqual(['second still']);
    await second();
    expect(await subscribers(`${prefix}u`)).toBe(0);
  });
});
