/**
 * The gateway's bounds on tasks: live tasks per principal (tasks.maxPerPrincipal, TASK_LIMIT
 * past it), the ttl a 2025 client may ask for (capped at tasks.maxTtlMs), and a task gone
 * after its ttl (-32602, as an unknown id).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startGateway, type RunningGateway } from '../support/gateway.js';
import { modern, tasksConfig } from '../support/tasks.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(tasksConfig({ tasks: { maxPerPrincipal: 2, defaultTtlMs: 1500, maxTtlMs: 5000 } }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

describe('task limits', () => {
  it('refuses a task past maxPerPrincipal with TASK_LIMIT, and takes one again once the others expire', async () => {
    const a = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).result;
    await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    const refused = await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(refused.error).toMatchObject({
      code: -32017,
      data: { type: 'TASK_LIMIT', retryable: true, maxPerPrincipal: 2 },
    });
    // An ordinary call is not a task: not bounded by it.
    expect((await modern(gw, 'tools/call', { name: 'greet', arguments: { name: 'x' } })).result.content[0].text).toBe(
      'Hello, x!',
    );
    await new Promise((r) => setTimeout(r, 1700));
    expect((await modern(gw, 'tasks/get', { taskId: a.taskId })).error.code).toBe(-32602);
    expect(
      (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).result.resultType,
    ).toBe('task');
  });

  it("caps a 2025 client's ttl at maxTtlMs", async () => {
    const init = await post(gw.url, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ttl', version: '1' } },
    });
    const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const created = (
      await post(
        gw.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 86_400_000 } },
        },
        headers,
      )
    ).json;
    expect(created.result.task.ttl).toBe(5000);
  });
});
