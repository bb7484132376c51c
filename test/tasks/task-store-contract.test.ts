/**
 * One contract, three task stores (memory, Redis on a real redis-server, a real Redis Cluster): create and read,
 * the per-binding bounds (tasks, and bytes: at creation and as a record grows), the status
 * compare-and-set that keeps a cancelled task cancelled, paging by cursor, a binding dropped
 * whole, and expiry at creation + ttl (by Redis itself: PEXPIREAT, no timer here).
 */
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskBounds, TaskRecord, TaskStore } from '../../src/contracts/task-store.js';
import { MemoryTaskStore } from '../../src/session/memory-task-store.js';
import { RedisTaskStore } from '../../src/session/redis-task-store.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';

let redis: RedisServer;
let cluster: RedisCluster;
let n = 0;

beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

function record(binding: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  const now = Date.now();
  return {
    taskId: `t${n++}-${Math.random().toString(36).slice(2)}`,
    binding,
    era: '2026-07-28',
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    owner: 'replica-a',
    scope: 'task:x',
    requestId: 'task:x',
    params: { name: 'slow_compute', arguments: { seconds: 1 } },
    ...overrides,
  };
}

function bounds(maxPerPrincipal: number, maxBytesPerPrincipal = 1 << 20): TaskBounds {
  return { maxPerPrincipal, maxBytesPerPrincipal };
}

/** The data of the TASK_LIMIT a store's call was refused with (undefined: it was not). */
async function refusal(call: Promise<unknown>): Promise<Record<string, unknown> | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    const error = err as { type?: string; detail?: Record<string, unknown> };
    expect(error.type).toBe('TASK_LIMIT');
    return error.detail;
  }
}

const stores: Array<[string, () => TaskStore]> = [
  ['memory', () => new MemoryTaskStore(50)],
  ['redis', () => new RedisTaskStore(new Redis(redis.url), `contract${n++}:`)],
  // A binding's keys share one hash tag: its scripts run on one node.
  [
    'redis cluster',
    () =>
      new RedisTaskStore(
        new Cluster(cluster.addresses.map((a) => ({ host: a.split(':')[0], port: Number(a.split(':')[1]) }))),
        `contract${n++}:`,
      ),
  ],
];

describe.each(stores)('%s task store', (_name, make) => {
  let store: TaskStore;
  beforeAll(() => {
    store = make();
  });
  afterAll(async () => {
    await store.close();
  });

  it('stores a task and reads it back whole, results with empty arrays and objects included', async () => {
    const r = record('b1', { result: { content: [], structuredContent: {} }, status: 'completed' });
    await store.create(r, bounds(10));
    expect(await store.get(r.taskId)).toEqual(r);
    expect(await store.get('unknown')).toBeUndefined();
  });

  it("reads a record written before the eras had dates (era 'legacy', 'modern') with the era's date", async () => {
    const old = (era: string) => ({ ...record('old-era'), era }) as unknown as TaskRecord;
    const [legacy, modern] = [old('legacy'), old('modern')];
    await store.create(legacy, bounds(10));
    await store.create(modern, bounds(10));
    expect(await store.get(legacy.taskId)).toEqual({ ...legacy, era: '2025-11-25' });
    expect(await store.get(modern.taskId)).toEqual({ ...modern, era: '2026-07-28' });
    const listed = await store.list('old-era', undefined, 10);
    expect(listed?.tasks.map((t) => t.era).sort()).toEqual(['2025-11-25', '2026-07-28']);
  });

  it('bounds each binding separately', async () => {
    for (let i = 0; i < 3; i++) expect(await refusal(store.create(record('bounded'), bounds(3)))).toBeUndefined();
    expect(await refusal(store.create(record('bounded'), bounds(3)))).toEqual({ maxPerPrincipal: 3 });
    expect(await refusal(store.create(record('other'), bounds(3)))).toBeUndefined();
  });

  it("bounds each binding's bytes, at creation and as a record grows; a record's charge never shrinks", async () => {
    // Each new record is charged its bytes and END_RESERVE_BYTES (1 KiB): about 1.3 KB here.
    const limit = bounds(100, 6000);
    const big = record('bytes', { result: { content: [{ type: 'text', text: 'x'.repeat(7000) }] } });
    expect(await refusal(store.create(big, limit))).toEqual({ maxBytesPerPrincipal: 6000 });
    const a = record('bytes');
    await store.create(a, limit);
    const grown = {
      ...a,
      status: 'completed' as const,
      result: { content: [{ type: 'text', text: 'y'.repeat(3500) }] },
    };
    expect(await store.transition(grown, ['working'], 6000)).toBe(true);
    const b = record('bytes');
    await store.create(b, limit);
    // b's result would take the binding past its bytes: refused, b unchanged; another binding is not touched.
    expect(await refusal(store.transition({ ...grown, taskId: b.taskId }, ['working'], 6000))).toEqual({
      maxBytesPerPrincipal: 6000,
    });
    expect((await store.get(b.taskId))?.status).toBe('working');
    expect(await refusal(store.create(record('bytes-other', { result: grown.result }), limit))).toBeUndefined();
    // a shrinks, but stays charged at its largest: b still cannot grow.
    expect(await store.transition({ ...a, status: 'completed' }, ['completed'], 6000)).toBe(true);
    expect(await refusal(store.transition({ ...grown, taskId: b.taskId }, ['working'], 6000))).toEqual({
      maxBytesPerPrincipal: 6000,
    });
    // Its failure fits in what its creation reserved.
    expect(
      await store.transition(
        { ...b, status: 'failed', error: { code: -32017, message: 'too big' } },
        ['working'],
        6000,
      ),
    ).toBe(true);
  });

  it('drops a binding whole: its tasks, its count and its bytes', async () => {
    const limit = bounds(2, 4000);
    const ids = [record('dropped'), record('dropped')];
    for (const r of ids) await store.create(r, limit);
    const kept = record('not-dropped');
    await store.create(kept, limit);
    expect(await refusal(store.create(record('dropped'), limit))).toEqual({ maxPerPrincipal: 2 });
    await store.dropBinding('dropped');
    for (const r of ids) expect(await store.get(r.taskId)).toBeUndefined();
    expect(await store.transition({ ...ids[0]!, status: 'completed' }, ['working'])).toBe(false);
    expect((await store.list('dropped', undefined, 10))?.tasks).toEqual([]);
    expect(await store.get(kept.taskId)).toEqual(kept);
    const big = record('dropped', { result: { content: [{ type: 'text', text: 'z'.repeat(2500) }] } });
    expect(await refusal(store.create(big, limit))).toBeUndefined();
    await store.dropBinding('never-had-any');
  });

  it('transitions only from the statuses named: a cancelled task stays cancelled', async () => {
    const r = record('b2');
    await store.create(r, bounds(10));
    expect(await store.transition({ ...r, status: 'cancelled' }, ['working', 'input_required'])).toBe(true);
    expect(
      await store.transition({ ...r, status: 'completed', result: { content: [] } }, ['working', 'input_required']),
    ).toBe(false);
    expect((await store.get(r.taskId))?.status).toBe('cancelled');
    expect(await store.transition({ ...record('b2'), taskId: 'missing' }, ['working'])).toBe(false);
  });

  it("lists a binding's tasks page by page; a cursor not its own is refused", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = record('lister', { createdAt: Date.now() + i });
      ids.push(r.taskId);
      await store.create(r, bounds(10));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list('lister', cursor, 2);
      expect(page).toBeDefined();
      seen.push(...page!.tasks.map((t) => t.taskId));
      cursor = page!.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(await store.list('lister', 'not-a-cursor', 2)).toBeUndefined();
    expect((await store.list('nobody', undefined, 2))?.tasks).toEqual([]);
  });

  it('forgets a task at creation + ttl, whatever its status, and frees its place in the bound', async () => {
    const r = record('short', { ttlMs: 300, result: { content: [{ type: 'text', text: 'w'.repeat(2500) }] } });
    await store.create(r, bounds(1, 4000));
    expect(await refusal(store.create(record('short'), bounds(1, 4000)))).toEqual({ maxPerPrincipal: 1 });
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(await store.get(r.taskId)).toBeUndefined();
    // Its bytes went with it too.
    expect(await refusal(store.create(record('short', { result: r.result }), bounds(1, 4000)))).toBeUndefined();
  });
});

describe('redis task store', () => {
  it('leaves expiry to Redis: the task key carries its PEXPIREAT', async () => {
    const client = new Redis(redis.url);
    const store = new RedisTaskStore(client, 'ttl:');
    const r = record('ttl', { ttlMs: 30_000 });
    await store.create(r, bounds(5));
    const pttl = await client.pttl(`ttl:task:${r.taskId}`);
    expect(pttl).toBeGreaterThan(25_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
    await store.close();
  });
});
