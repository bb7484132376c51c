/** call_tool of a task tool (2026-07-28, tasks extension): the call becomes a task as a direct call does. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { modern, tasksConfig, waitStatus } from '../support/tasks.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(tasksConfig({ toolSearch: { enabled: true, pinned: ['greet', 'slow_compute'] } }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

describe('tool search and tasks', () => {
  it('lists greet and the gateway tools; call_tool of slow_compute starts a task that completes', async () => {
    const tools = (await modern(gw, 'tools/list')).result.tools;
    expect(tools.map((t: { name: string }) => t.name)).toEqual(['search_tools', 'call_tool', 'greet', 'slow_compute']);
    // Pinned tools show task support as the plain list does.
    expect(tools[3].execution).toEqual({ taskSupport: 'optional' });
    const found = (await modern(gw, 'tools/call', { name: 'search_tools', arguments: { query: 'slow computation' } }))
      .result.structuredContent.tools;
    expect(found[0].name).toBe('slow_compute');
    const direct = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).result;
    const through = (
      await modern(gw, 'tools/call', {
        name: 'call_tool',
        arguments: { name: 'slow_compute', arguments: { seconds: 0 } },
      })
    ).result;
    expect(direct.resultType).toBe('task');
    expect(through.resultType).toBe('task');
    expect(Object.keys(through).sort()).toEqual(Object.keys(direct).sort());
    expect((await waitStatus(gw, through.taskId)).status).toBe('completed');
  });
});
