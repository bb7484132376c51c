/**
 * A subscriber connection that subscribes the moment it connects (as the bus and the expiry
 * listener may, when a replica starts or reconnects) stays up with our SUBSCRIBER_OPTIONS. With
 * ioredis's ready check on, that SUBSCRIBE goes out before the check's INFO, the INFO fails in
 * subscriber mode and the connection is dropped: the failure seen as "Connection in subscriber
 * mode" (or Redis's "Can't execute 'info'") at replica start-up in about 1 full run in 5.
 * Real redis-server on a free port.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBSCRIBER_OPTIONS } from '../../src/redis/connection.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describe('subscriber connections', () => {
  it('subscribe as the connection connects: it becomes ready, stays subscribed and hears a message', async () => {
    const sub = new Redis(redis.url, { ...SUBSCRIBER_OPTIONS, retryStrategy: () => null });
    const pub = new Redis(redis.url);
    try {
      const errors: string[] = [];
      const heard: string[] = [];
      sub.on('error', (err: Error) => errors.push(err.message));
      sub.on('message', (_channel: string, message: string) => heard.push(message));
      const subscribed = new Promise<unknown>((resolve, reject) =>
        sub.once('connect', () => sub.subscribe('early').then(resolve, reject)),
      );
      await subscribed;
      await until('the subscriber to be ready', () => sub.status === 'ready', 5000);
      await until(
        'the message',
        async () => (await pub.publish('early', 'hello')) > 0 && heard.includes('hello'),
        5000,
        50,
      );
      expect(errors).toEqual([]);
      expect(sub.status).toBe('ready');
    } finally {
      sub.disconnect();
      pub.disconnect();
    }
  });
});
