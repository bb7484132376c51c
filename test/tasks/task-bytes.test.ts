/**
 * Task records are bounded in bytes per principal (tasks.maxBytesPerPrincipal) and go with the
 * session that owned them (2025-11-25 without auth). A session runs echo as a task with a 12 KB
 * argument, again and again, under a 64 KiB bound: the records hold results, not arguments, so
 * five fit; every later task ends with TASK_LIMIT naming the byte bound (its result refused, or
 * itself at creation), and the store holds no more than the bound. Another session's tasks and
 * calls are served. Deleting the session drops its records. Memory store, and Redis (a real
 * redis-server), each with the real echo server as upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import type { MemoryTaskStore } from '../../src/session/memory-task-store.js';
import {
  ECHO_SERVER,
  exampleConfig,
  startGateway,
  stdioUpstream,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { legacySession } from '../support/tasks.js';
import { until } from '../support/wait.js';

const BOUND = 64 * 1024;
const TEXT = 'x'.repeat(12_000);
const PREFIX = 'bytes:';

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
}, 30_000);

afterAll(async () => {
  await redis?.stop();
});

/** How many bytes of task records the store holds, and whether it holds the task `id` at all. */
interface Held {
  bytes(ids: string[]): Promise<number>;
  has(id: string): Promise<boolean>;
}

const stores: Array<[string, () => Record<string, unknown>, (gw: RunningGateway) => Held]> = [
  [
    'memory',
    () => ({}),
    (gw) => {
      const store = () => internals(gw.gateway.server).tasks!.store as MemoryTaskStore;
      return { bytes: async () => store().bytes, has: async (id) => (await store().get(id)) !== undefined };
    },
  ],
  [
    'redis',
    () => ({ sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: PREFIX } }),
    () => ({
      bytes: async (ids) => {
        let sum = 0;
        for (const id of ids) sum += Number((await redis.command('HSTRLEN', `${PREFIX}task:${id}`, 'doc')).slice(1));
        return sum;
      },
      has: async (id) => (await redis.command('EXISTS', `${PREFIX}task:${id}`)).startsWith(':1'),
    }),
  ],
];

describe.each(stores)('task records in bytes (%s store)', (_name, storeConfig, heldBy) => {
  let gw: RunningGateway;

  beforeAll(async () => {
    const upstreams = [stdioUpstream('echo', ECHO_SERVER, { tasks: { tools: ['echo'] } })];
    gw = await startGateway(exampleConfig({ upstreams, tasks: { maxBytesPerPrincipal: BOUND }, ...storeConfig() }));
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
  });

  it("bounds a principal's records in bytes, and drops them with the session that owned them", async () => {
    const held = heldBy(gw);
    const session = await legacySession(gw);
    const ids: string[] = [];
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      const created = await session('tools/call', {
        name: 'echo__echo',
        arguments: { text: TEXT },
        task: { ttl: 86_400_000 },
      });
      if (created.error) {
        expect(created.error).toMatchObject({
          code: -32017,
          data: { type: 'TASK_LIMIT', maxBytesPerPrincipal: BOUND },
        });
        outcomes.push('refused');
        continue;
      }
      ids.push(created.result.task.taskId);
      const result = await session('tasks/result', { taskId: created.result.task.taskId });
      if (result.error) {
        expect(result.error).toMatchObject({ code: -32017, data: { type: 'TASK_LIMIT', maxBytesPerPrincipal: BOUND } });
        outcomes.push('failed');
      } else {
        expect(toolText(result.result)).toBe(TEXT);
        outcomes.push('completed');
      }
    }
    // Five results of 12 KB fit in 64 KiB; with the arguments kept beside each result, two would.
    expect(outcomes.filter((o) => o === 'completed')).toHaveLength(5);
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill('completed'));
    expect(outcomes).toContain('refused');
    expect(await held.bytes(ids)).toBeLessThanOrEqual(BOUND);

    // Another client: its own task and an ordinary call are served.
    const other = await legacySession(gw);
    const task = (await other('tools/call', { name: 'echo__echo', arguments: { text: 'other' }, task: {} })).result
      .task;
    expect(toolText((await other('tasks/result', { taskId: task.taskId })).result)).toBe('other');
    expect(toolText((await other('tools/call', { name: 'echo__echo', arguments: { text: 'plain' } })).result)).toBe(
      'plain',
    );

    // The session owned its tasks (no auth): they go with it; the other session's stay.
    await session.end();
    await until(
      "the deleted session's task records to go",
      async () => !(await Promise.all(ids.map((id) => held.has(id)))).includes(true),
      5000,
    );
    expect(await held.has(task.taskId)).toBe(true);
    await untilNothingHeld(gw);
    await other.end();
    await until("the other session's task record to go with it", async () => !(await held.has(task.taskId)), 5000);
  });
});
