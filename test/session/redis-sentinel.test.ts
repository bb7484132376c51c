/**
 * The session and event stores through Redis Sentinel: a master, a replica and one
 * `redis-server --sentinel` started by this file on free loopback ports. The shared contracts,
 * then what Sentinel adds: the fail-fast options still hold, and a failover is followed by the
 * same stores (no restart), keyspace notifications included.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStoreLimits } from '../../src/streams/event-store.js';
import { connectRedis, type RedisClient, type RedisTarget } from '../../src/redis/connection.js';
import { RedisEventStore } from '../../src/streams/redis-event-store.js';
import { RedisSessionStore, type RedisSessionStoreOptions } from '../../src/session/redis-store.js';
import type { SessionRecord } from '../../src/session/session-store.js';
import { startRedisSentinel, type RedisSentinelSetup } from '../support/redis-sentinel.js';
import { eventStoreContract } from './event-store-contract.js';
import { sessionStoreContract } from './store-contract.js';
import { until } from '../support/wait.js';

let setup: RedisSentinelSetup;
const stores: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  setup = await startRedisSentinel({ replica: true });
}, 30_000);

afterAll(async () => {
  for (const store of stores.splice(0)) await store.close();
  await setup?.stop();
});

const target = (): RedisTarget => ({ sentinels: setup.sentinels, name: setup.name });

async function readyStore(
  options: Partial<RedisSessionStoreOptions> & { ttlSeconds: number },
): Promise<RedisSessionStore> {
  const store = new RedisSessionStore({
    target: target(),
    keyPrefix: `t-${randomUUID().slice(0, 8)}:`,
    sweepIntervalMs: 100,
    ...options,
  });
  stores.push(store);
  await until('the store to be ready', () => store.ready, 5000);
  if (options.keyspaceEvents !== false)
    await until('keyspace notifications', () => store.status().expiryEvents === 'keyspace', 5000);
  return store;
}

async function readyConnection(): Promise<RedisClient> {
  const connection = connectRedis({ target: target(), name: 'sentinel-test' });
  // Closed with the stores: left open, it would keep asking the stopped sentinel after the file ends.
  stores.push({ close: async () => connection.disconnect() });
  await until('the connection to be ready', () => connection.status === 'ready', 5000);
  return connection;
}

async function eventStore(limits: EventStoreLimits): Promise<RedisEventStore> {
  return new RedisEventStore(await readyConnection(), { ...limits, keyPrefix: `t-${randomUUID().slice(0, 8)}:` });
}

function record(): SessionRecord {
  return {
    id: randomUUID(),
    protocolVersion: '2025-06-18',
    clientCapabilities: {},
    clientInfo: { name: 'sentinel-test', version: '1' },
    initialized: false,
    createdAt: Date.now(),
  };
}

sessionStoreContract('RedisSessionStore via Sentinel (keyspace notifications)', ({ ttlSeconds }) =>
  readyStore({ ttlSeconds }),
);
eventStoreContract('RedisEventStore via Sentinel', (limits) => eventStore(limits));

describe('Redis Sentinel', () => {
  it('connects to the master the sentinel names', async () => {
    const store = await readyStore({ ttlSeconds: 60, keyPrefix: 'sentinel:' });
    const rec = record();
    await store.create(rec);
    expect(await setup.masterPort()).toBe(setup.master.port);
    expect(await setup.master.command('EXISTS', `sentinel:{${rec.id}}:session`)).toBe(':1\r\n');
  });

  it('still fails fast: a master that stops answering fails each command within commandTimeoutMs', async () => {
    const store = await readyStore({ ttlSeconds: 60, commandTimeoutMs: 500 });
    const events = await eventStore({ maxEvents: 10, maxAgeMs: 60_000 });
    const rec = record();
    await store.create(rec);
    setup.master.pause();
    try {
      const t = Date.now();
      await expect(store.get(rec.id)).rejects.toThrow(/timed out/i);
      await expect(events.append(rec.id, 'a', undefined)).rejects.toThrow(/timed out/i);
      const took = Date.now() - t;
      console.log(`Sentinel master hung (SIGSTOP): get and append rejected in ${took} ms (commandTimeoutMs 500, 2000)`);
      expect(took).toBeLessThan(3500);
    } finally {
      setup.master.resume();
    }
    await until(
      'the store to answer again',
      async () => (await store.get(rec.id).catch(() => undefined)) !== undefined,
    );
  });

  it('follows a failover with the same stores: data replicated before it is served by the new master', async () => {
    const store = await readyStore({ ttlSeconds: 60, keyPrefix: 'failover:', maxBackoffMs: 200 });
    const short = await readyStore({ ttlSeconds: 1, sweepIntervalMs: 600_000, maxBackoffMs: 200 }); // expiry only from notifications
    const events = await eventStore({ maxEvents: 100, maxAgeMs: 60_000 });
    const rec = record();
    await store.create(rec);
    const before = await events.append(rec.id, 'a', undefined);
    // Replicated before the failover (asynchronous replication would otherwise lose it).
    await until(
      'the replica to acknowledge',
      async () => (await setup.master.command('WAIT', '1', '500')) === ':1\r\n',
    );

    const t0 = Date.now();
    const promoted = await setup.failover();
    const failoverMs = Date.now() - t0;
    // Writes reach the new master: the same store, reconnected through the sentinel.
    const t1 = Date.now();
    let failed = 0;
    await until(
      'a write to land on the new master',
      async () => {
        const fresh = record();
        if (
          !(await store.create(fresh).then(
            () => true,
            () => false,
          ))
        )
          return ++failed < 0;
        return (await promoted.command('EXISTS', `failover:{${fresh.id}}:session`)) === ':1\r\n';
      },
      10_000,
    );
    console.log(
      `Sentinel failover done in ${failoverMs} ms (the sentinel demotes the old master after its grace period); the store wrote to the new master ${Date.now() - t1} ms later, ${failed} writes failed meanwhile`,
    );
    expect(await store.get(rec.id)).toEqual(rec);

    await until(
      'the event store on the new master',
      async () => (await events.append(rec.id, 'a', undefined).catch(() => undefined)) !== undefined,
    );
    expect((await events.replay(rec.id, 'a', before!.position))!.events.length).toBeGreaterThanOrEqual(1);

    // Notifications are turned on again on the new master, and expiry is heard from it.
    await until('keyspace notifications on the new master', () => short.status().expiryEvents === 'keyspace', 10_000);
    expect(await promoted.command('CONFIG', 'GET', 'notify-keyspace-events')).toMatch(/E.*x|x.*E/);
    const expired: string[] = [];
    short.onExpired((id) => expired.push(id));
    const brief = record();
    await until(
      'a write through the short-ttl store',
      async () =>
        await short
          .create(brief)
          .then(() => true)
          .catch(() => false),
    );
    await until('the expiry event from the new master', () => expired.includes(brief.id), 6000);
  }, 60_000);
});
