/**
 * Tasks of an upstream that runs them itself (examples/tasks-native: SDK v1 McpServer with a
 * taskStore, 2025-11-25 experimental tasks): the gateway keeps their taskSupport, forwards the
 * task-augmented call, and wraps the upstream's task id (signed, bound to the session) so that
 * tasks/get, tasks/result, tasks/cancel and the status notifications route back. The SDK v1
 * client's experimental tasks API drives it; forged ids get -32602.
 */
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingUpstream } from '../support/everything.js';
import {
  MCP_HEADERS,
  exampleConfig,
  post,
  startGateway,
  stdioUpstream,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';

const NATIVE = resolve(import.meta.dirname, '../../examples/tasks-native/server.mjs');

let gw: RunningGateway;
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('native', NATIVE, { prefix: '' }),
        // The same server with `upstreams[].tasks` on one tool: the gateway runs that one's tasks.
        stdioUpstream('gwrun', NATIVE, { prefix: 'g', tasks: { tools: ['native_slow'] } }),
        // The official server-everything runs its simulate-research-query as a task of its own (SDK v1 taskStore).
        everythingUpstream('ev', { prefix: 'ev' }),
      ],
      tasks: { pollIntervalMs: 200 },
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
});

async function connect(): Promise<{
  client: Client;
  sessionId: string;
  statuses: Array<{ taskId: string; status: string }>;
}> {
  const client = new Client({ name: 'pass-through', version: '1' }, { capabilities: {} });
  const statuses: Array<{ taskId: string; status: string }> = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    statuses.push({ taskId: n.params.taskId, status: n.params.status });
  });
  const transport = new StreamableHTTPClientTransport(gw.url);
  await client.connect(transport);
  clients.push(client);
  return { client, sessionId: transport.sessionId!, statuses };
}

async function createTask(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 30_000 } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

function rpc(sessionId: string) {
  return async (id: number, method: string, params: Record<string, unknown>) =>
    (
      await post(
        gw.url,
        { jsonrpc: '2.0', id, method, params },
        { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      )
    ).json;
}

describe('tasks of an upstream that runs them itself (pass-through)', () => {
  it("keeps the upstream's taskSupport; the gateway's own `upstreams[].tasks` win where given", async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(byName).toMatchObject({
      native_slow: 'optional',
      native_required: 'required',
      hello: 'forbidden',
      g__native_slow: 'optional',
      g__native_required: 'required',
    });
  });

  it('lifecycle: a wrapped id, polled and collected through the gateway; status notifications name it', async () => {
    const { client, statuses } = await connect();
    const seen: Array<{ type: string; [k: string]: any }> = [];
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'native_slow', arguments: { seconds: 1 } },
      CallToolResultSchema,
      { task: { ttl: 30_000 } },
    ))
      seen.push(m as never);
    expect(seen[0]!.type).toBe('taskCreated');
    const taskId: string = seen[0]!.task.taskId;
    expect(taskId.startsWith('u.')).toBe(true);
    expect(seen.at(-1)).toMatchObject({ type: 'result' });
    expect(toolText(seen.at(-1)!.result)).toBe('slept 1 s');
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: 'completed' });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    await expect.poll(() => statuses.filter((s) => s.taskId === taskId).map((s) => s.status)).toContain('completed');
    expect(statuses.every((s) => s.taskId.startsWith('u.'))).toBe(true);
  });

  it("cancel reaches the upstream's task; a required tool without a task is the upstream's refusal", async () => {
    const { client, sessionId } = await connect();
    const taskId = await createTask(client, 'native_slow', { seconds: 60 });
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    const sync = await client.callTool({ name: 'hello', arguments: { name: 'pt' } });
    expect(toolText(sync)).toBe('Hello, pt!');
    const refused = await rpc(sessionId)(1, 'tools/call', { name: 'native_required', arguments: {} });
    expect(refused.error?.code ?? refused.result?.isError).toBeTruthy();
  });

  it('the gateway runs the task where `upstreams[].tasks` names the tool (its own id, its own store)', async () => {
    const { client } = await connect();
    const taskId = await createTask(client, 'g__native_slow', { seconds: 0 });
    expect(taskId.startsWith('u.')).toBe(false);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(toolText(result)).toBe('slept 0 s');
    // tasks/list: the gateway's own tasks only.
    const { tasks } = await client.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toContain(taskId);
    expect(tasks.some((t) => t.taskId.startsWith('u.'))).toBe(false);
  });

  it("a forged, altered or another session's wrapped id is -32602, and nothing reaches the upstream", async () => {
    const mine = await connect();
    const taskId = await createTask(mine.client, 'native_slow', { seconds: 60 });
    const other = await connect();
    const call = rpc(other.sessionId);
    expect((await call(1, 'tasks/get', { taskId })).error.code).toBe(-32602);
    expect((await call(2, 'tasks/cancel', { taskId })).error.code).toBe(-32602);
    expect((await call(3, 'tasks/result', { taskId })).error.code).toBe(-32602);
    // The same signature on a route to another upstream.
    const [, body, mac] = taskId.split('.');
    const [, id] = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as [string, string];
    const rerouted = `u.${Buffer.from(JSON.stringify(['gwrun', id])).toString('base64url')}.${mac}`;
    const own = rpc(mine.sessionId);
    for (const [n, forged] of [rerouted, 'u.', 'u.x.y', `u.${body}.AAAA`, `u.!!!.${mac}`].entries()) {
      expect((await own(10 + n, 'tasks/get', { taskId: forged })).error.code).toBe(-32602);
    }
    // Still running, still its owner's.
    expect((await mine.client.experimental.tasks.getTask(taskId)).status).toBe('working');
    await mine.client.experimental.tasks.cancelTask(taskId);
  });

  it('the official server-everything: its required task tool runs as its own task through the gateway', async () => {
    const { client } = await connect();
    const tool = (await client.listTools()).tools.find((t) => t.name === 'ev__simulate-research-query');
    expect(tool?.execution?.taskSupport).toBe('required');
    const seen: Array<{ type: string; [k: string]: any }> = [];
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'ev__simulate-research-query', arguments: { topic: 'gateways' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    ))
      seen.push(m as never);
    expect(seen[0]!.type).toBe('taskCreated');
    expect(String(seen[0]!.task.taskId).startsWith('u.')).toBe(true);
    expect(seen.at(-1)).toMatchObject({ type: 'result' });
    expect(toolText(seen.at(-1)!.result)).toContain('gateways');
  }, 20_000);
});
