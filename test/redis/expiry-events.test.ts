/**
 * RedisExpiryEvents as a module, on real throwaway redis-servers: it turns keyspace expiry
 * notifications on and reports each expired key; a restart loses them (server configuration)
 * and it turns them on again as it reconnects; where CONFIG is refused (a managed Redis) it is
 * not active, yet still hears what an operator turned on.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisExpiryEvents } from '../../src/redis/expiry-events.js';
import { createRedisClient, type RedisClient } from '../../src/redis/connection.js';
import { quietLog } from '../support/in-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
const clients: RedisClient[] = [];
const listeners: RedisExpiryEvents[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterEach(() => {
  for (const l of listeners.splice(0)) l.close();
  for (const c of clients.splice(0)) c.disconnect();
});

afterAll(async () => {
  await redis?.stop();
});

function listen(server: RedisServer): { events: RedisExpiryEvents; expired: string[] } {
  const client = createRedisClient({ url: server.url }, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  client.on('error', () => undefined);
  clients.push(client);
  const expired: string[] = [];
  const events = new RedisExpiryEvents(client, {
    onExpired: (key) => expired.push(key),
    maxBackoffMs: 200,
    log: quietLog(),
  });
  listeners.push(events);
  return { events, expired };
}

const flags = async (server: RedisServer) =>
  (await server.command('CONFIG', 'GET', 'notify-keyspace-events')).split('\r\n')[4] ?? '';

describe('RedisExpiryEvents', () => {
  it('turns expiry notifications on and reports each expired key', async () => {
    await redis.command('CONFIG', 'SET', 'notify-keyspace-events', '');
    const { events, expired } = listen(redis);
    await until('it is active', () => events.active);
    expect(await flags(redis)).toMatch(/^(?=.*E)(?=.*x)/);
    const key = `k-${randomUUID()}`;
    await redis.command('SET', key, 'v', 'PX', '30');
    await until('the expiry was heard', () => expired.includes(key));
  });

  it('keeps flags an operator set, adding only what it needs', async () => {
    await redis.command('CONFIG', 'SET', 'notify-keyspace-events', 'Kg');
    const { events } = listen(redis);
    await until('it is active', () => events.active);
    const now = await flags(redis);
    for (const f of ['K', 'g', 'E', 'x']) expect(now).toContain(f);
  });

  it('turns them on again after a restart lost them, as it reconnects', async () => {
    const { events, expired } = listen(redis);
    await until('it is active', () => events.active);
    // It comes back with none (nothing saved): only the listener can turn them on.
    await redis.restart();
    await until('notifications are on again', async () => (await flags(redis)).includes('x') && events.active, 15_000);
    const key = `after-restart-${randomUUID()}`;
    await redis.command('SET', key, 'v', 'PX', '30');
    await until('the expiry was heard', () => expired.includes(key));
  });

  it('where CONFIG is refused it is not active, but hears what the operator turned on', async () => {
    const managed = await startRedis({ args: ['--rename-command', 'CONFIG', '', '--notify-keyspace-events', 'Ex'] });
    try {
      const { events, expired } = listen(managed);
      // Until it has subscribed, an expiry goes unheard: a key a try, until one is heard.
      await until(
        'an expiry is heard',
        async () => {
          const key = `managed-${randomUUID()}`;
          await managed.command('SET', key, 'v', 'PX', '30');
          return until('that key', () => expired.includes(key), 1000).then(
            () => true,
            () => false,
          );
        },
        15_000,
      );
      expect(events.active).toBe(false);
    } finally {
      for (const l of listeners.splice(0)) l.close();
      await managed.stop();
    }
  });
});
