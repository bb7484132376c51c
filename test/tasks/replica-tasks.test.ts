/**
 * Tasks across replicas: two gateway processes on one real redis-server, requests alternating
 * between them. A task created on one is read, cancelled and answered on the other (the cancel
 * reaches the replica running the call; the answer reaches the worker waiting for it). Then a
 * replica is SIGKILLed under running tasks: the other one reports them failed, with a typed
 * error, within seconds (the dead replica's heartbeat in the owner registry has lapsed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import type { RunningGateway } from '../support/gateway.js';
import { modern, tasksUpstream, waitStatus } from '../support/tasks.js';

let redis: RedisServer;
let replicas: GatewayProcess[] = [];

/** What the helpers need of a gateway: its URL. */
const at = (i: number) => ({ url: replicas[i]!.url }) as unknown as RunningGateway;

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(
    2,
    {
      sessions: { redisUrl: redis.url },
      upstreams: [
        tasksUpstream(),
        tasksUpstream({
          name: 'one',
          prefix: 'one',
          mode: 'shared',
          pool: { min: 1, max: 1, maxInFlight: 1, queueTimeoutMs: 3000 },
        }),
      ],
      logLevel: 'warn',
    },
    (c) => spawnGateway(c),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('tasks on two replicas', () => {
  it('created on one, read on the other at once, completed there', async () => {
    const created = (await modern(at(0), 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'r' } }))
      .result;
    expect((await modern(at(1), 'tasks/get', { taskId: created.taskId })).result.status).toBe('working');
    expect((await waitStatus(at(1), created.taskId)).result.content[0].text).toBe('r: computed for 1 s');
  });

  it('a cancel on the other replica stops the call where it runs (its only worker slot is free again)', async () => {
    // Upstream "one" on replica 0 has one worker taking one call at a time.
    const created = (await modern(at(0), 'tools/call', { name: 'one__slow_compute', arguments: { seconds: 60 } }))
      .result;
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    expect((await modern(at(1), 'tasks/cancel', { taskId: created.taskId })).result.resultType).toBe('complete');
    expect((await waitStatus(at(0), created.taskId)).status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
    const greet = (await modern(at(0), 'tools/call', { name: 'one__greet', arguments: { name: 'freed' } })).result;
    expect(greet.content[0].text).toBe('Hello, freed!');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('input asked on one replica is answered on the other, one key at a time', async () => {
    const created = (await modern(at(0), 'tools/call', { name: 'multi_input', arguments: {} })).result;
    let task = await waitStatus(at(1), created.taskId, ['input_required']);
    for (let i = 0; Object.keys(task.inputRequests ?? {}).length < 2 && i < 50; i++)
      task = (await modern(at(i % 2), 'tasks/get', { taskId: created.taskId })).result;
    const [first, second] = Object.keys(task.inputRequests);
    await modern(at(1), 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { [first!]: { action: 'accept', content: { name: 'p1', confirm: true } } },
    });
    const partial = (await modern(at(0), 'tasks/get', { taskId: created.taskId })).result;
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual([second]);
    await modern(at(1), 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { [second!]: { action: 'accept', content: { name: 'p2', confirm: true } } },
    });
    const done = await waitStatus(at(0), created.taskId);
    expect(done.status).toBe('completed');
    expect(done.result.content[0].text).toContain('p2');
  });

  it('a replica SIGKILLed under running tasks: the other one fails them with a typed error', async () => {
    const tasks = await Promise.all(
      [1, 2, 3].map(
        async () =>
          (await modern(at(0), 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result
            .taskId as string,
      ),
    );
    for (const id of tasks) expect((await modern(at(1), 'tasks/get', { taskId: id })).result.status).toBe('working');
    replicas[0]!.kill9();
    await replicas[0]!.exited;
    const killed = Date.now();
    const ended = await Promise.all(tasks.map((id) => waitStatus(at(1), id, [], 15_000)));
    const tookMs = Date.now() - killed;
    for (const task of ended) {
      expect(task.status).toBe('failed');
      expect(task.error).toMatchObject({ code: -32004, data: { type: 'TASK_REPLICA_LOST' } });
    }
    // The owner registry's heartbeat lapses after 3 s.
    expect(tookMs).toBeLessThan(8000);
    console.log(`tasks of a SIGKILLed replica failed after ${tookMs} ms`);
  });
});
