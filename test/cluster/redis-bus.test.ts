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

  it('sends a SUBSCRIBE again that ioredis refused while its connection came up, and no other refusal', async () => {
    const prefix = `t-${randomUUID()}:`;
    const real = createRedisClient({ url: redis.url }, { connectTimeout: 2000, ...SUBSCRIBER_OPTIONS });
    // What a Cluster's own subscriber connection answers when its ready check loses the race.
    const refusals = ['Connection in subscriber mode, only subscriber commands may be used', 'x', 'other failure'];
    let refused = 0;
    const subscriber = new Proxy(real, {
      get(target, key) {
        if (key === 'subscribe')
          return (channel: string) => {
            const message = refusals[refused];
            if (message === 'x' || message === undefined) return target.subscribe(channel);
            refused++;
            return Promise.reject(new Error(message));
          };
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const publisher = createRedisClient({ url: redis.url }, { maxRetriesPerRequest: 1 });
    const b = new RedisBus(publisher, subscriber, prefix, quietLog());
    buses.push(b);
    const heard: string[] = [];
    // The first SUBSCRIBE is refused as in the race, the second goes through.
    await b.subscribe('r', (m) => heard.push(m));
    expect(refused).toBe(1);
    await bus(prefix).publish('r', 'after the race');
    await until('the message', () => heard.length === 1, 5000);
    expect(heard).toEqual(['after the race']);

    // Any other refusal is the caller's at once, and the channel is not taken as subscribed.
    refusals.splice(0, refusals.length, 'other failure', 'x');
    refused = 0;
    await expect(b.subscribe('s', () => undefined)).rejects.toThrow('other failure');
    expect(refused).toBe(1);
    const second: string[] = [];
    await b.subscribe('s', (m) => second.push(m));
    await bus(prefix).publish('s', 'subscribed on the second try');
    await until('the second message', () => second.length === 1, 5000);
  });
});
