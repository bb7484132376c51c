/**
 * Quotas count a call as the tool it runs, however it is made: a task-augmented tools/call is
 * counted when the task is created (and its run's time upstream as the run ends), a tool search
 * `call_tool` as its tool, on the same count as direct calls; polling and searching count nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, openSession, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { legacySession, tasksConfig } from '../support/tasks.js';
import { until } from '../support/wait.js';

let tasks: RunningGateway;
let search: RunningGateway;

beforeAll(async () => {
  tasks = await startGateway(
    tasksConfig({
      quotas: {
        rules: [
          { name: 'compute', window: 'day', calls: 3, match: { tools: ['slow_compute'] } },
          { name: 'compute-time', window: 'month', upstreamSeconds: 0.5, match: { tools: ['slow_compute'] } },
        ],
      },
    }),
  );
  const rules = [{ name: 'echoes', window: 'day', calls: 3, match: { tools: ['echo__echo'] } }];
  search = await startGateway(exampleConfig({ toolSearch: { enabled: true }, quotas: { rules } }));
}, 60_000);

afterAll(async () => {
  await Promise.all([tasks?.stop(), search?.stop()]);
});

describe('quotas and tasks', () => {
  it("counts a task as one call of its tool when it is created, and its run's seconds as the run ends", async () => {
    const rpc = await legacySession(tasks);
    const create = () =>
      rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0.6, label: 't' }, task: { ttl: 30_000 } });
    const first = await create();
    const taskId: string = first.result.task.taskId;
    expect(typeof taskId).toBe('string');
    // Polling is no call of the tool.
    await until('the task done', async () => (await rpc('tasks/get', { taskId })).result.status === 'completed');
    // 0.6 s upstream used of 0.5: the next task is refused by the time quota, not the calls quota (1 of 3 used).
    const used = async (quota: string) => {
      const report = (await (await fetch(`${tasks.base}/status.json`)).json()) as {
        quotas: Array<{ name: string; measures: Array<{ top: Array<{ used: number }> }> }>;
      };
      return report.quotas.find((q) => q.name === quota)?.measures[0]?.top[0]?.used ?? 0;
    };
    await until('its seconds counted', async () => (await used('compute-time')) >= 0.5);
    expect(await used('compute')).toBe(1); // the task's run is no second call
    const second = await create();
    expect(second.error.data).toMatchObject({
      type: 'QUOTA_EXCEEDED',
      quota: 'compute-time',
      measure: 'upstreamSeconds',
    });
    // Another tool of the same upstream is no part of either quota.
    expect((await rpc('tools/call', { name: 'greet', arguments: { name: 'x' } })).result).toBeDefined();
    await rpc.end();
  }, 30_000);
});

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('quotas and tool search', () => {
  it('counts call_tool as the tool it runs, on the direct calls’ count', async () => {
    const sid = await openSession(search.url);
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const through = (id: number) => call(id, 'call_tool', { name: 'echo__echo', arguments: { text: `t${id}` } });
    for (const id of [1, 2])
      expect(toolText((await post(search.url, through(id), headers)).json.result)).toBe(`t${id}`);
    expect((await post(search.url, call(3, 'echo__echo', { text: 'direct' }), headers)).json.result).toBeDefined();
    for (const body of [through(4), call(5, 'echo__echo', { text: 'direct' })]) {
      const refused = await post(search.url, body, headers);
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ code: -32015, data: { type: 'QUOTA_EXCEEDED', quota: 'echoes' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const found = await post(search.url, call(6, 'search_tools', { query: 'echo text back' }), headers);
    expect(found.json.result).toBeDefined();
    const other = await post(
      search.url,
      call(7, 'call_tool', { name: 'echo__add', arguments: { a: 1, b: 2 } }),
      headers,
    );
    expect(other.json.result).toBeDefined();
  }, 30_000);
});
