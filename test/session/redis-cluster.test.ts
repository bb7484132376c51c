/**
 * The session and event stores, the owner registry and the bus on a real 3-master Redis Cluster
 * built by this file on loopback (one cluster for the whole file). The shared contracts, then
 * what a Cluster changes: keys spread over every master, expiry notifications are per node,
 * a heartbeat refreshes keys of many slots, pub/sub crosses nodes, and a hung master fails only
 * its own keys' commands, fast.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStoreLimits } from '../../src/streams/event-store.js';
import { RedisBus } from '../../src/cluster/redis-bus.js';
import { connectRedis, type RedisClient, type RedisTarget } from '../../src/redis/connection.js';
import { RedisEventStore } from '../../src/streams/redis-event-store.js';
import { RedisOwnerRegistry } from '../../src/cluster/redis-owner-registry.js';
import { RedisSessionStore, type RedisSessionStoreOptions } from '../../src/session/redis-store.js';
import type { SessionRecord } from '../../src/session/session-store.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import type { RedisServer } from '../support/redis.js';
import { eventStoreContract } from './event-store-contract.js';
import { sessionStoreContract } from './store-contract.js';
import { until } from '../support/wait.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let cluster: RedisCluster;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  for (const c of open.splice(0)) await c.close();
  await cluster?.stop();
});

const target = (): RedisTarget => ({ cluster: cluster.addresses });

async function readyStore(
  options: Partial<RedisSessionStoreOptions> & { ttlSeconds: number },
): Promise<RedisSessionStore> {
  const store = new RedisSessionStore({
    target: target(),
    keyPrefix: `t-${randomUUID().slice(0, 8)}:`,
    sweepIntervalMs: 100,
    ...options,
  });
  open.push(store);
  await until('the store to be ready', () => store.ready, 10_000);
  if (options.keyspaceEvents !== false)
    await until('keyspace notifications on every node', () => store.status().expiryEvents === 'keyspace', 10_000);
  return store;
}

async function readyConnection(name: string, subscriber = false): Promise<RedisClient> {
  const connection = connectRedis({ target: target(), name, subscriber });
  open.push({ close: async () => connection.disconnect() });
  await until(`${name} to be ready`, () => connection.status === 'ready', 10_000);
  return connection;
}

async function eventStore(limits: EventStoreLimits): Promise<RedisEventStore> {
  return new RedisEventStore(await readyConnection('cluster-events'), {
    ...limits,
    keyPrefix: `t-${randomUUID().slice(0, 8)}:`,
  });
}

function record(): SessionRecord {
  return {
    id: randomUUID(),
    protocolVersion: '2025-06-18',
    clientCapabilities: {},
    clientInfo: { name: 'cluster-test', version: '1' },
    initialized: false,
    createdAt: Date.now(),
  };
}

/** The master holding `key`: the one node that answers for it instead of redirecting (MOVED). */
async function nodeOf(key: string): Promise<RedisServer> {
  for (const node of cluster.nodes) if ((await node.command('EXISTS', key)).startsWith(':1')) return node;
  throw new Error(`no node holds ${key}`);
}

sessionStoreContract(
  'RedisSessionStore on a 3-master Cluster (keyspace notifications from every master)',
  ({ ttlSeconds }) => readyStore({ ttlSeconds }),
);
sessionStoreContract('RedisSessionStore on a 3-master Cluster (local expiry checks only)', ({ ttlSeconds }) =>
  readyStore({ ttlSeconds, keyspaceEvents: false }),
);
eventStoreContract('RedisEventStore on a 3-master Cluster', (limits) => eventStore(limits));

describe('Redis Cluster', () => {
  it("spreads sessions over every master and hears each one's expiry notifications", async () => {
    // No local sweep to speak of: expiry can only be heard from the masters' notifications.
    const store = await readyStore({ ttlSeconds: 1, keyPrefix: 'spread:', sweepIntervalMs: 600_000 });
    const expired: string[] = [];
    store.onExpired((id) => expired.push(id));
    const records = Array.from({ length: 30 }, record);
    await Promise.all(records.map((r) => store.create(r)));
    const holders = new Set<number>();
    for (const r of records) holders.add((await nodeOf(`spread:{${r.id}}:session`)).port);
    expect(holders.size).toBe(3);
    for (const node of cluster.nodes)
      expect(await node.command('CONFIG', 'GET', 'notify-keyspace-events')).toMatch(/E.*x|x.*E/);
    await until('every session to be reported expired', () => records.every((r) => expired.includes(r.id)), 8000);
    expect(expired).toHaveLength(30);
  });

  it("keeps a replica's owner keys in every slot alive with its heartbeat, and frees them when it stops", async () => {
    const keyPrefix = `own-${randomUUID().slice(0, 8)}:`;
    const a = new RedisOwnerRegistry(await readyConnection('owners-a'), {
      replicaId: 'replica-a',
      keyPrefix,
      heartbeatTtlMs: 300,
    });
    const b = new RedisOwnerRegistry(await readyConnection('owners-b'), {
      replicaId: 'replica-b',
      keyPrefix,
      heartbeatTtlMs: 300,
    });
    const scopes = Array.from({ length: 20 }, () => randomUUID());
    try {
      for (const scope of scopes) expect(await a.claim(scope, 'everything')).toBe('replica-a');
      const holders = new Set<number>();
      for (const scope of scopes) holders.add((await nodeOf(`${keyPrefix}{${scope}}:owner:everything`)).port);
      expect(holders.size).toBe(3);
      // Several owner-key lifetimes (2 × 300 ms): only the heartbeat keeps them.
      await sleep(1500);
      for (const scope of scopes) expect(await b.claim(scope, 'everything')).toBe('replica-a');
      expect(await b.isAlive('replica-a')).toBe(true);
    } finally {
      await a.close();
    }
    expect(await b.isAlive('replica-a')).toBe(false);
    for (const scope of scopes) expect(await b.ownerOf(scope, 'everything')).toBeUndefined();
    await b.close();
  });

  it('carries bus messages between replicas, whichever nodes their connections use', async () => {
    const prefix = `bus-${randomUUID().slice(0, 8)}:`;
    const a = new RedisBus(await readyConnection('bus-a-pub'), await readyConnection('bus-a-sub', true), prefix);
    const b = new RedisBus(await readyConnection('bus-b-pub'), await readyConnection('bus-b-sub', true), prefix);
    const got: string[] = [];
    const channels = Array.from({ length: 10 }, (_, i) => `session:{${randomUUID()}}:${i}`);
    for (const channel of channels) await b.subscribe(channel, (m) => got.push(m));
    for (const channel of channels) await a.publish(channel, `to ${channel}`);
    await until('every message', () => got.length === channels.length, 5000);
    expect(got.sort()).toEqual(channels.map((c) => `to ${c}`).sort());
    await a.close();
    await b.close();
  });

  it("a hung master fails its own keys' commands within commandTimeoutMs; the other masters keep serving", async () => {
    const store = await readyStore({ ttlSeconds: 60, keyPrefix: 'hung:', commandTimeoutMs: 300 });
    const paused = cluster.nodes[0]!;
    const records: SessionRecord[] = [];
    const onPaused = new Set<string>();
    // Random ids land on random masters: 12 may all miss the paused one (about 1 run in 130), so
    // draw more until both it and the others hold some.
    while (records.length < 12 || onPaused.size === 0 || onPaused.size === records.length) {
      if (records.length >= 120) throw new Error('120 random session ids and still no spread over the masters');
      const batch = Array.from({ length: 12 }, record);
      await Promise.all(batch.map((r) => store.create(r)));
      records.push(...batch);
      for (const r of batch) if ((await nodeOf(`hung:{${r.id}}:session`)) === paused) onPaused.add(r.id);
    }
    // Shorter than cluster-node-timeout (2 s): the cluster itself stays up.
    paused.pause();
    try {
      const t = Date.now();
      const results = await Promise.all(
        records.map((r) =>
          store.get(r.id).then(
            () => 'ok',
            () => 'failed',
          ),
        ),
      );
      const took = Date.now() - t;
      console.log(
        `Cluster master hung (SIGSTOP): ${onPaused.size} gets failed, ${records.length - onPaused.size} served, all settled in ${took} ms (commandTimeoutMs 300)`,
      );
      records.forEach((r, i) => expect(results[i], r.id).toBe(onPaused.has(r.id) ? 'failed' : 'ok'));
      expect(took).toBeLessThan(1500);
    } finally {
      paused.resume();
    }
    await until(
      'the hung master to serve again',
      async () => (await store.get([...onPaused][0]!).catch(() => undefined)) !== undefined,
    );
  });
});
