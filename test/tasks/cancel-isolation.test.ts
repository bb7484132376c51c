/**
 * Cancelling a task whose call runs on a shared stdio worker ends that call only: the worker
 * process stays (no restart, same pids), another session's ordinary call on the same pool
 * answers, and another task on it completes. Both eras' cancels, real child processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { childPidsRunning } from '../support/child-processes.js';
import { TASKS_FIXTURE, modern, tasksConfig, waitStatus } from '../support/tasks.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(tasksConfig({}, { mode: 'shared', pool: { min: 2, max: 2, maxInFlight: 8 } }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

async function legacySession(): Promise<Record<string, string>> {
  const res = await post(gw.url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'iso', version: '1' } },
  });
  const headers = { 'mcp-session-id': res.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

describe('cancelling a task', () => {
  it('ends its call only: the workers, other calls and other tasks go on', async () => {
    const workers = childPidsRunning(TASKS_FIXTURE);
    expect(workers).toHaveLength(2);
    const doomed = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    const other = (
      await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 2, label: 'other task' } })
    ).result;
    const session = await legacySession();
    const legacyTask = (
      await post(
        gw.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 60 }, task: {} },
        },
        session,
      )
    ).json.result.task;
    const ordinary = post(
      gw.url,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'slow_compute', arguments: { seconds: 2, label: 'ordinary' } },
      },
      session,
    );
    await new Promise((r) => setTimeout(r, 300));

    const started = Date.now();
    await modern(gw, 'tasks/cancel', { taskId: doomed.taskId });
    const cancelled = (
      await post(
        gw.url,
        { jsonrpc: '2.0', id: 3, method: 'tasks/cancel', params: { taskId: legacyTask.taskId } },
        session,
      )
    ).json.result;
    expect(cancelled.status).toBe('cancelled');
    expect((await waitStatus(gw, doomed.taskId)).status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);

    expect(toolText((await ordinary).json.result)).toBe('ordinary: computed for 2 s');
    const done = await waitStatus(gw, other.taskId);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'other task: computed for 2 s' }] },
    });
    expect(childPidsRunning(TASKS_FIXTURE)).toEqual(workers);
    // Both workers still serve: the two cancelled calls freed their slots on them.
    const pids = await Promise.all(
      [1, 2, 3, 4].map(async () => toolText((await modern(gw, 'tools/call', { name: 'pid', arguments: {} })).result)),
    );
    for (const pid of pids) expect(workers).toContain(Number(pid));
  });
});
