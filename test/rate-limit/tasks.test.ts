/**
 * A task counts as the tool it runs, once, when it is created: the task-augmented tools/call is
 * checked like a plain one, and polling it (tasks/get) is not that tool's call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { legacySession, tasksConfig } from '../support/tasks.js';

let gw: RunningGateway;

beforeAll(async () => {
  const rules = [{ name: 'compute', match: { tools: ['slow_compute'] }, key: 'tool', limit: 2, windowMs: 60000 }];
  gw = await startGateway(tasksConfig({ rateLimits: { rules } }));
}, 60_000);

afterAll(async () => {
  await gw?.stop();
});

describe('rate limits and tasks', () => {
  it('counts a task-augmented call as its tool when the task is created', async () => {
    const rpc = await legacySession(gw);
    const create = () =>
      rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 't' }, task: { ttl: 30_000 } });
    const first = await create();
    const taskId: string = first.result.task.taskId;
    expect(typeof taskId).toBe('string');
    for (let i = 0; i < 3; i++) expect((await rpc('tasks/get', { taskId })).result.taskId).toBe(taskId);
    expect((await create()).result.task).toBeDefined();
    const third = await create();
    expect(third.error.data).toMatchObject({ type: 'RATE_LIMITED', rule: 'compute' });
    // Another tool of the same upstream is no part of the rule.
    expect((await rpc('tools/call', { name: 'greet', arguments: { name: 'x' } })).result).toBeDefined();
    await rpc.end();
  }, 30_000);
});
