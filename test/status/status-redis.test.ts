/**
 * /status with sessions in Redis: the store and its connection state are shown, and a Redis that
 * goes away leaves the page answering (the store's state says so) instead of failing it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, openSession, startGateway, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
let gw: RunningGateway;

beforeAll(async () => {
  redis = await startRedis();
  gw = await startGateway(exampleConfig({ sessions: { store: 'redis', redisUrl: redis.url } }));
});

afterAll(async () => {
  await gw?.stop();
  await redis?.stop();
});

const report = async () =>
  (await (await fetch(`${gw.base}/status.json`)).json()) as {
    sessions: { store: string; storeState?: string; count: number | null };
  };

describe('/status with the Redis session store', () => {
  it('shows the store, its state and the sessions this replica knows', async () => {
    await openSession(gw.url);
    await openSession(gw.url);
    expect((await report()).sessions).toEqual({ store: 'redis', storeState: 'ready', count: 2 });
  });

  it('still answers while Redis is down, saying the store is not ready', async () => {
    await redis.stop();
    await until('the store to leave ready', async () => (await report()).sessions.storeState !== 'ready', 15_000, 100);
    const res = await fetch(`${gw.base}/status`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/redis store, known to this replica, (?!ready)[a-z]+/);
    await redis.start();
    await until(
      'the store to be ready again',
      async () => (await report()).sessions.storeState === 'ready',
      20_000,
      100,
    );
  });
});
