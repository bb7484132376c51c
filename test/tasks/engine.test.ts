/**
 * TaskEngine as a module: tools/call turned into tasks recorded in a real MemoryTaskStore, whose
 * calls run on a real shared pool of held-server workers (a call ends when the test releases its
 * key). TaskCalls, the seam the engine takes from the dispatcher, here runs each call on that pool
 * and cancels it there. Both eras: a 2025-11-25 session's task (created, followed, its result
 * waited for, cancelled, hidden from other sessions, gone with its session), a 2026-07-28 one
 * (the extension as the only opt-in), the refusals, a task whose runner replica is gone, shutdown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/contracts/request-context.js';
import type { UpstreamCall } from '../../src/contracts/upstream.js';
import { TaskEngine, type TaskCalls } from '../../src/tasks/engine.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import type { JsonRpcRequest } from '../../src/jsonrpc/messages.js';
import { MemoryTaskStore } from '../../src/session/memory-task-store.js';
import type { UpstreamGroup } from '../../src/upstream/group.js';
import { InFlightLimit } from '../../src/transport/in-flight-limit.js';
import { NO_IDENTITY } from '../../src/upstream/worker-set.js';
import { heldServer } from '../support/held-server.js';
import {
  GATEWAY_IDENTITY,
  configWith,
  quietLog,
  recordingSink,
  sessionContext,
  upstreamGroup,
} from '../support/in-process.js';
import { TASKS_EXT } from '../support/tasks.js';
import { until } from '../support/wait.js';

const log = quietLog();
const held = heldServer();
const HELD = {
  name: 'held',
  transport: 'stdio',
  command: held.command,
  args: held.args,
  pool: { min: 1, max: 1, maxInFlight: 16 },
};
const ROUTE = { upstream: 'held', original: 'hold' };
const LIMITS = configWith([HELD]).tasks;

let group: UpstreamGroup | undefined;
const stores: MemoryTaskStore[] = [];
let nextId = 1;

/** The engine's calls: each on the held pool, by (scope, request id); what it cancelled and released. */
interface PoolCalls extends TaskCalls {
  readonly cancelled: string[];
  readonly running: Map<string, UpstreamCall>;
}

async function poolCalls(): Promise<PoolCalls> {
  group = upstreamGroup(configWith([HELD]).upstreams);
  const workers = group.upstreams.get('held')!.workers;
  await workers.probe(GATEWAY_IDENTITY, async () => undefined);
  const running = new Map<string, UpstreamCall>();
  const cancelled: string[] = [];
  return {
    running,
    cancelled,
    run: (ctx, request) => {
      const key = `${ctx.scope} ${String(request.id)}`;
      const call = workers.call('tools/call', { ...request.params, name: 'hold' }, undefined, ctx.scope, NO_IDENTITY);
      running.set(key, call);
      return call.promise.finally(() => running.delete(key));
    },
    cancel: (scope, requestId) => {
      cancelled.push(`${scope} ${requestId}`);
      running
        .get(`${scope} ${requestId}`)
        ?.cancel(new GatewayError('REQUEST_CANCELLED', 'Request cancelled: the task was cancelled'));
    },
    releaseChain: () => undefined,
  };
}

/** An engine of replica `replicaId` over `store`; `alive`: the replicas whose heartbeat is fresh. */
function engine(
  calls: TaskCalls,
  store: MemoryTaskStore,
  replicaId = 'replica-a',
  alive: Set<string> = new Set([replicaId]),
): TaskEngine {
  const support = (_upstream: string, tool: string) =>
    tool === 'hold' ? 'optional' : tool === 'must' ? 'required' : undefined;
  return new TaskEngine(
    { store, replicaId, isAlive: async (id) => alive.has(id), limits: LIMITS, support, pageSize: 50, log },
    calls,
  );
}

function taskStore(): MemoryTaskStore {
  const s = new MemoryTaskStore();
  stores.push(s);
  return s;
}

const holdCall = (key: string, extra: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name: 'hold', arguments: { key }, ...extra },
});
const rpc = (method: string, params: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  params,
});
/** A 2025-11-25 session whose in-flight share is one request (a task's call keeps it). */
const legacy = (scope: string) =>
  sessionContext(scope, {
    protocolVersion: '2025-11-25',
    sessionSink: recordingSink(),
    client: scope,
    slots: new InFlightLimit(1),
  });
const modern = (capabilities: Record<string, unknown> = { extensions: { [TASKS_EXT]: {} } }): RequestContext => ({
  protocolVersion: '2026-07-28',
  stateless: true,
  clientCapabilities: capabilities,
  clientInfo: { name: 'tasks-test', version: '1' },
  scope: `req-${nextId++}`,
  sink: recordingSink(),
  sessionSink: undefined,
  remoteAddress: '127.0.0.1',
});
const taskIdOf = (created: Record<string, unknown> | undefined) =>
  String((created?.task as { taskId: string } | undefined)?.taskId ?? created?.taskId);

afterEach(async () => {
  await group?.close();
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe('TaskEngine, 2025-11-25 sessions', () => {
  it('a call with `task` becomes a task at once; tasks/get follows it, tasks/result waits for its result', async () => {
    const tasks = engine(await poolCalls(), taskStore());
    const ctx = legacy('s-result');
    const created = await tasks.intercept(ctx, holdCall('result', { task: { ttl: 60_000 } }), ROUTE);
    expect(created).toMatchObject({ task: { status: 'working', ttl: 60_000, pollInterval: LIMITS.pollIntervalMs } });
    const taskId = taskIdOf(created);
    // Its call keeps the session's one place until it ends.
    expect(tasks.held.places).toBe(1);
    expect((ctx.slots as InFlightLimit).acquire('s-result')).toBe(false);
    expect(await tasks.handle(ctx, rpc('tasks/get', { taskId }))).toMatchObject({ taskId, status: 'working' });
    const result = tasks.handle(ctx, rpc('tasks/result', { taskId }));
    held.release('result');
    expect(await result).toMatchObject({ content: [{ type: 'text', text: 'released result' }] });
    expect(await tasks.handle(ctx, rpc('tasks/get', { taskId }))).toMatchObject({ status: 'completed' });
    expect(tasks.held.places).toBe(0);
    expect((ctx.slots as InFlightLimit).acquire('s-result')).toBe(true);
    // The status change went to the session's own stream.
    const sink = ctx.sessionSink as ReturnType<typeof recordingSink>;
    expect(sink.messages).toEqual([
      expect.objectContaining({
        method: 'notifications/tasks/status',
        params: expect.objectContaining({ taskId, status: 'completed' }),
      }),
    ]);
  });

  it('refuses a task for a tool without support and none for a required one; earlier revisions see no tasks', async () => {
    const tasks = engine(await poolCalls(), taskStore());
    const ctx = legacy('s-refusals');
    await expect(
      tasks.intercept(ctx, holdCall('x', { task: {} }), { upstream: 'held', original: 'plain' }),
    ).rejects.toMatchObject({ type: 'TASK_NOT_SUPPORTED' });
    await expect(tasks.intercept(ctx, holdCall('x'), { upstream: 'held', original: 'must' })).rejects.toMatchObject({
      type: 'TASK_REQUIRED',
    });
    expect(await tasks.intercept(ctx, holdCall('x'), ROUTE)).toBeUndefined();
    const older = sessionContext('s-older', { protocolVersion: '2025-06-18' });
    expect(await tasks.intercept(older, holdCall('x', { task: {} }), ROUTE)).toBeUndefined();
    await expect(tasks.handle(older, rpc('tasks/list', {}))).rejects.toMatchObject({ type: 'METHOD_NOT_FOUND' });
  });

  it('tasks/cancel cancels its call on the pool and ends it; a second cancel is refused', async () => {
    const calls = await poolCalls();
    const tasks = engine(calls, taskStore());
    const ctx = legacy('s-cancel');
    const taskId = taskIdOf(await tasks.intercept(ctx, holdCall('never', { task: {} }), ROUTE));
    expect(calls.running.size).toBe(1);
    expect(await tasks.handle(ctx, rpc('tasks/cancel', { taskId }))).toMatchObject({ taskId, status: 'cancelled' });
    expect(calls.cancelled).toEqual([`s-cancel task:${taskId}`]);
    await until('the pool call ended', () => calls.running.size === 0);
    expect(group!.upstreams.get('held')!.workers.status().inFlight).toBe(0);
    expect(await tasks.handle(ctx, rpc('tasks/get', { taskId }))).toMatchObject({ status: 'cancelled' });
    await expect(tasks.handle(ctx, rpc('tasks/cancel', { taskId }))).rejects.toMatchObject({ type: 'TASK_TERMINAL' });
    expect(tasks.held.places).toBe(0);
  });

  it('a session sees its own tasks only, and they go when it ends', async () => {
    const tasks = engine(await poolCalls(), taskStore());
    const mine = legacy('s-mine');
    const other = legacy('s-other');
    const taskId = taskIdOf(await tasks.intercept(mine, holdCall('mine', { task: {} }), ROUTE));
    await expect(tasks.handle(other, rpc('tasks/get', { taskId }))).rejects.toMatchObject({ type: 'TASK_NOT_FOUND' });
    expect(await tasks.handle(other, rpc('tasks/list', {}))).toEqual({ tasks: [] });
    expect(await tasks.handle(mine, rpc('tasks/list', {}))).toEqual({ tasks: [expect.objectContaining({ taskId })] });
    tasks.endSession('s-mine');
    await until(
      'the session’s tasks are gone',
      async () => ((await tasks.handle(mine, rpc('tasks/list', {}))) as { tasks: unknown[] }).tasks.length === 0,
    );
    await expect(tasks.handle(mine, rpc('tasks/get', { taskId }))).rejects.toMatchObject({ type: 'TASK_NOT_FOUND' });
    held.release('mine');
  });
});

describe('TaskEngine, 2026-07-28 requests', () => {
  it('the extension is the opt-in: a task at once, its result inlined in tasks/get once done', async () => {
    const tasks = engine(await poolCalls(), taskStore());
    const ctx = modern();
    const created = await tasks.intercept(ctx, holdCall('modern'), ROUTE);
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = taskIdOf(created);
    held.release('modern');
    await until(
      'the task completed',
      async () =>
        ((await tasks.handle(modern(), rpc('tasks/get', { taskId }))) as { status: string }).status === 'completed',
    );
    expect(await tasks.handle(modern(), rpc('tasks/get', { taskId }))).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'released modern' }] },
    });
  });

  it('without the extension an optional tool runs plainly and a required one is -32021 naming it', async () => {
    const tasks = engine(await poolCalls(), taskStore());
    expect(await tasks.intercept(modern({}), holdCall('x'), ROUTE)).toBeUndefined();
    const refused = await tasks
      .intercept(modern({}), holdCall('x'), { upstream: 'held', original: 'must' })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({
      type: 'MISSING_CLIENT_CAPABILITY',
      detail: { requiredCapabilities: { extensions: { [TASKS_EXT]: {} } } },
    });
    await expect(tasks.handle(modern({}), rpc('tasks/get', { taskId: 'x' }))).rejects.toMatchObject({
      type: 'MISSING_CLIENT_CAPABILITY',
    });
  });
});

describe('TaskEngine across replicas and at shutdown', () => {
  it('a live task whose runner replica stopped is failed when read on another', async () => {
    const calls = await poolCalls();
    const store = taskStore();
    const alive = new Set(['replica-a', 'replica-b']);
    const a = engine(calls, store, 'replica-a', alive);
    const b = engine(calls, store, 'replica-b', alive);
    const ctx = legacy('s-replicas');
    const taskId = taskIdOf(await a.intercept(ctx, holdCall('lost', { task: {} }), ROUTE));
    expect(await b.handle(ctx, rpc('tasks/get', { taskId }))).toMatchObject({ status: 'working' });
    alive.delete('replica-a');
    expect(await b.handle(ctx, rpc('tasks/get', { taskId }))).toMatchObject({ status: 'failed' });
    expect((await store.get(taskId))?.error).toMatchObject({
      code: new GatewayError('TASK_REPLICA_LOST').toJsonRpc().code,
    });
    held.release('lost');
  });

  it('shutdown() fails the tasks still live here, and only those', async () => {
    const tasks = engine(await poolCalls(), taskStore());
    const ctx = legacy('s-shutdown');
    const live = taskIdOf(await tasks.intercept(ctx, holdCall('live', { task: {} }), ROUTE));
    const done = taskIdOf(await tasks.intercept(ctx, holdCall('done', { task: {} }), ROUTE));
    held.release('done');
    await until(
      'one task completed',
      async () =>
        ((await tasks.handle(ctx, rpc('tasks/get', { taskId: done }))) as { status: string }).status === 'completed',
    );
    expect(await tasks.shutdown()).toBe(1);
    expect(await tasks.handle(ctx, rpc('tasks/get', { taskId: live }))).toMatchObject({ status: 'failed' });
    expect(await tasks.handle(ctx, rpc('tasks/get', { taskId: done }))).toMatchObject({ status: 'completed' });
    held.release('live');
  });
});
