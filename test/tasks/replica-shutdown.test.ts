/**
 * A replica that stops on purpose (SIGTERM) under running tasks: it fails them itself as it
 * shuts down, with a typed error (TASK_REPLICA_LOST, reason "shutdown"), so the other replica
 * reads them failed at once, not after the heartbeat lapse a SIGKILL leaves (replica-tasks.test.ts).
 * Two gateway processes on one real redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import type { RunningGateway } from '../support/gateway.js';
import { modern, tasksUpstream } from '../support/tasks.js';

let redis: RedisServer;
let replicas: GatewayProcess[] = [];
const at = (i: number) => ({ url: replicas[i]!.url }) as unknown as RunningGateway;

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(
    2,
    { sessions: { redisUrl: redis.url }, upstreams: [tasksUpstream()], logLevel: 'warn' },
    (c) => spawnGateway(c),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('tasks of a replica that shuts down', () => {
  it('SIGTERM: its running tasks (working and input_required) are failed by it, typed, before it exits', async () => {
    const working = await Promise.all(
      [1, 2, 3].map(
        async () =>
          (await modern(at(0), 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result
            .taskId as string,
      ),
    );
    // A task waiting for input: its input chain waits on replica 0.
    const asking = (await modern(at(0), 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x' } })).result
      .taskId as string;
    for (
      let i = 0;
      i < 50 && (await modern(at(1), 'tasks/get', { taskId: asking })).result.status !== 'input_required';
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const ids = [...working, asking];
    const before = await Promise.all(
      ids.map(async (id) => (await modern(at(1), 'tasks/get', { taskId: id })).result.status),
    );
    expect(before).toEqual(['working', 'working', 'working', 'input_required']);

    const started = Date.now();
    await replicas[0]!.stop();
    const stoppedMs = Date.now() - started;
    // Read once, right after the exit: no polling, no waiting for a heartbeat to lapse.
    const after = await Promise.all(ids.map(async (id) => (await modern(at(1), 'tasks/get', { taskId: id })).result));
    for (const task of after) {
      expect(task.status).toBe('failed');
      expect(task.error).toMatchObject({ code: -32004, data: { type: 'TASK_REPLICA_LOST', reason: 'shutdown' } });
    }
    console.log(
      `SIGTERM with ${ids.length} live tasks: replica exited in ${stoppedMs} ms, all failed (reason shutdown) on the first read`,
    );
  }, 30_000);
});
