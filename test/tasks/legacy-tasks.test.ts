/**
 * The 2025-11-25 experimental tasks through the gateway, with the official SDK v1 client's
 * experimental tasks API (client.experimental.tasks: callToolStream, getTask, getTaskResult,
 * listTasks, cancelTask) against a stdio server that knows nothing of tasks. Input inside a
 * task reaches the client through its session, as any elicitation does. Bad inputs get the
 * spec's errors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { tasksConfig } from '../support/tasks.js';

let gw: RunningGateway;
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startGateway(tasksConfig({ tasks: { pollIntervalMs: 200 } }));
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
});

async function connect(sessionId?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'legacy-tasks', version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { confirm: true } }));
  const transport = new StreamableHTTPClientTransport(gw.url, sessionId ? { sessionId } : {});
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** The SDK's stream of a task-augmented call, collected. */
async function stream(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Array<{ type: string; [k: string]: any }>> {
  const seen: Array<{ type: string; [k: string]: any }> = [];
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  }))
    seen.push(m as never);
  return seen;
}

describe('2025-11-25 tasks, SDK v1 experimental client', () => {
  it('declares the tasks capability and marks task tools', async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(byName).toMatchObject({ greet: undefined, slow_compute: 'optional', failing_job: 'required' });
  });

  it('a task-augmented call: created at once, polled, its result by tasks/result', async () => {
    const { client } = await connect();
    const seen = await stream(client, 'slow_compute', { seconds: 1, label: 'sdk' });
    expect(seen[0]!.type).toBe('taskCreated');
    const taskId: string = seen[0]!.task.taskId;
    expect(seen[0]!.task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 200 });
    expect(seen.at(-1)).toMatchObject({ type: 'result' });
    expect(toolText(seen.at(-1)!.result)).toBe('sdk: computed for 1 s');
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task.status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    const { tasks } = await client.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toContain(taskId);
  });

  it('a tool error fails the task (2025-11-25), tasks/result still gives the tool result', async () => {
    const { client } = await connect();
    const seen = await stream(client, 'failing_job', {});
    const taskId: string = seen[0]!.task.taskId;
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('failed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
  });

  it('an elicitation inside a task reaches the client through its session; the task completes', async () => {
    const { client } = await connect();
    const statuses: string[] = [];
    client.setNotificationHandler(
      (await import('@modelcontextprotocol/sdk/types.js')).TaskStatusNotificationSchema,
      (n) => {
        statuses.push(n.params.status);
      },
    );
    const seen = await stream(client, 'confirm_delete', { filename: 'a.txt' });
    expect(toolText(seen.at(-1)!.result)).toBe('deleted a.txt');
    expect(statuses).toContain('input_required');
    expect(statuses.at(-1)).toBe('completed');
  });

  it('cancel: the task is cancelled at once, a second cancel is -32602', async () => {
    const { client } = await connect();
    const created = (await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 60 }, task: { ttl: 30_000 } } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    )) as { task: { taskId: string } };
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled.status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(created.task.taskId)).rejects.toMatchObject({ code: -32602 });
    await expect(
      client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema),
    ).rejects.toMatchObject({ code: -32007 });
  });

  it('a task outlives its client: the client goes, a later one on the same session collects the result', async () => {
    const first = await connect();
    const created = (await first.client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 1, label: 'later' }, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    )) as { task: { taskId: string } };
    const sessionId = first.transport.sessionId!;
    await first.client.close();
    await new Promise((r) => setTimeout(r, 1500));
    const second = await connect(sessionId);
    const result = await second.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(toolText(result)).toBe('later: computed for 1 s');
  });

  it("bad inputs get the spec's errors", async () => {
    const { transport } = await connect();
    const sid = transport.sessionId!;
    const rpc = async (id: number, method: string, params: Record<string, unknown>) =>
      (
        await post(
          gw.url,
          { jsonrpc: '2.0', id, method, params },
          { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
        )
      ).json;
    // A task on a tool without task support, and none on one that requires it: -32601.
    expect((await rpc(1, 'tools/call', { name: 'greet', arguments: { name: 'x' }, task: {} })).error.code).toBe(-32601);
    expect((await rpc(2, 'tools/call', { name: 'failing_job', arguments: {} })).error).toMatchObject({
      code: -32601,
      data: { type: 'TASK_REQUIRED' },
    });
    // A bad ttl: -32602.
    for (const task of [{ ttl: -1 }, { ttl: 1.5 }, { ttl: 'soon' }, 'x']) {
      expect((await rpc(3, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task })).error.code).toBe(
        -32602,
      );
    }
    // Unknown ids, tasks/result on a call that was no task, a bad cursor: -32602.
    expect((await rpc(4, 'tasks/get', { taskId: 'nope' })).error.code).toBe(-32602);
    expect((await rpc(5, 'tasks/result', { taskId: 'nope' })).error.code).toBe(-32602);
    expect((await rpc(6, 'tasks/cancel', { taskId: 'nope' })).error.code).toBe(-32602);
    expect((await rpc(7, 'tasks/list', { cursor: 'nope' })).error.code).toBe(-32602);
    expect((await rpc(8, 'tasks/get', {})).error.code).toBe(-32602);
    // tasks/update is the 2026-07-28 extension's: not a 2025 method.
    expect((await rpc(9, 'tasks/update', { taskId: 'nope', inputResponses: {} })).error.code).toBe(-32601);
    // A task of another session (no auth: tasks belong to their session) is unknown here.
    const other = await connect();
    const created = (await other.client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    )) as { task: { taskId: string } };
    expect((await rpc(10, 'tasks/get', { taskId: created.task.taskId })).error.code).toBe(-32602);
    expect((await rpc(11, 'tasks/list', {})).result.tasks.map((t: { taskId: string }) => t.taskId)).not.toContain(
      created.task.taskId,
    );
  });

  it('a session of an older revision calls task tools as ordinary tools', async () => {
    const res = await post(gw.url, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    });
    const sid = res.headers.get('mcp-session-id')!;
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const call = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'failing_job', arguments: {}, task: {} } },
      headers,
    );
    expect(call.json.result.isError).toBe(true);
  });
});
