/**
 * One contract, two task stores (memory, and Redis on a real redis-server): create and read,
 * the per-binding bound, the status compare-and-set that keeps a cancelled task cancelled,
 * paging by cursor, and expiry at creation + ttl (by Redis itself: PEXPIREAT, no timer here).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskRecord, TaskStore } from '../../src/contracts/task-store.js';
import { MemoryTaskStore } from '../../src/session/memory-task-store.js';
import { RedisTaskStore } from '../../src/session/redis-task-store.js';
import { startRedis, type RedisServer } from '../support/redis.js';

let redis: RedisServer;
let n = 0;

beforeAll(async () => {
  redis = await startRedis();
}, 30_000);

afterAll(async () => {
  await redis?.stop();
});

function record(binding: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  const now = Date.now();
  return {
    taskId: `t${n++}-${Math.random().toString(36).slice(2)}`,
    binding,
    era: 'modern',
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

const stores: Array<[string, () => TaskStore]> = [
  ['memory', () => new MemoryTaskStore(50)],
  ['redis', () => new RedisTaskStore(new Redis(redis.url), `contract${n++}:`)],
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
    expect(await store.create(r, 10)).toBe(true);
    expect(await store.get(r.taskId)).toEqual(r);
    expect(await store.get('unknown')).toBeUndefined();
  });

  it('bounds each binding separately', async () => {
    for (let i = 0; i < 3; i++) expect(await store.create(record('bounded'), 3)).toBe(true);
    expect(await store.create(record('bounded'), 3)).toBe(false);
    expect(await store.create(record('other'), 3)).toBe(true);
  });

  it('transitions only from the statuses named: a cancelled task stays cancelled', async () => {
    const r = record('b2');
    await store.create(r, 10);
    expect(await store.transition({ ...r, status: 'cancelled' }, ['working', 'input_required'])).toBe(true);
    expect(await store.transition({ ...r, status: 'completed', result: { content: [] } }, ['working', 'input_required'])).toBe(false);
    expect((await store.get(r.taskId))?.status).toBe('cancelled');
    expect(await store.transition({ ...record('b2'), taskId: 'missing' }, ['working'])).toBe(false);
  });

  it('lists a binding\'s tasks page by page; a cursor not its own is refused', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = record('lister', { createdAt: Date.now() + i });
      ids.push(r.taskId);
      await store.create(r, 10);
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
    const r = record('short', { ttlMs: 300 });
    await store.create(r, 1);
    expect(await store.create(record('short'), 1)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(await store.get(r.taskId)).toBeUndefined();
    expect(await store.create(record('short'), 1)).toBe(true);
  });
});

describe('redis task store', () => {
  it('leaves expiry to Redis: the task key carries its PEXPIREAT', async () => {
    const client = new Redis(redis.url);
    const store = new RedisTaskStore(client, 'ttl:');
    const r = record('ttl', { ttlMs: 30_000 });
    await store.create(r, 5);
    const pttl = await client.pttl(`ttl:task:${r.taskId}`);
    expect(pttl).toBeGreaterThan(25_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
    await store.close();
  });
});
