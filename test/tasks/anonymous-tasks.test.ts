/**
 * Anonymous 2026-07-28 tasks (no auth) are not one binding shared by every client: each client
 * address has its own tasks.maxPerPrincipal, and a task is reached by its id alone (192 random
 * bits: the id is the capability). A client at 127.0.0.1 fills its share of tasks; a client at
 * 127.0.0.2 still creates one (before, it got TASK_LIMIT for defaultTtlMs). Real stdio upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { statelessFrom, tasksConfig } from '../support/tasks.js';
import { until } from '../support/wait.js';

const MAX = 3;
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(tasksConfig({ tasks: { maxPerPrincipal: MAX } }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

describe('anonymous 2026-07-28 tasks', () => {
  it('are counted per client address, and read by their id from anywhere', async () => {
    const a = '127.0.0.1';
    const b = '127.0.0.2';
    const mine: string[] = [];
    for (let i = 0; i < MAX; i++)
      mine.push(
        (await statelessFrom(gw, a, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } })).result.taskId,
      );
    const over = await statelessFrom(gw, a, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
    expect(over.error).toMatchObject({ code: -32017, data: { type: 'TASK_LIMIT', maxPerPrincipal: MAX } });

    // Another client: its own share.
    const theirs = (
      await statelessFrom(gw, b, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'b' } })
    ).result;
    expect(theirs).toMatchObject({ resultType: 'task', status: 'working' });
    await until(
      "b's task to complete",
      async () => (await statelessFrom(gw, b, 'tasks/get', { taskId: theirs.taskId })).result.status === 'completed',
    );
    expect(
      (await statelessFrom(gw, b, 'tools/call', { name: 'greet', arguments: { name: 'b' } })).result.content[0].text,
    ).toBe('Hello, b!');

    // The id is the capability: whoever holds it reads and cancels it, from any address.
    expect((await statelessFrom(gw, b, 'tasks/get', { taskId: mine[0] })).result.status).toBe('working');
    for (const taskId of mine)
      expect((await statelessFrom(gw, b, 'tasks/cancel', { taskId })).result.resultType).toBe('complete');
    expect((await statelessFrom(gw, a, 'tasks/get', { taskId: mine[0] })).result.status).toBe('cancelled');
    await untilNothingHeld(gw);
    expect(internals(gw.gateway.server).tasks).toMatchObject({ places: 0, waits: 0 });
  });
});
