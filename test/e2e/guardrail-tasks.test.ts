/**
 * Guardrails on task results (issue 33: "a task's result is intercepted when it is read"), in both
 * eras: the gateway's own tasks (examples/tasks, `upstreams[].tasks`) get their result checked as
 * their call ends, so tasks/result (2025-11-25, the SDK v1 experimental client) and tasks/get
 * (2026-07-28) hand out only what passed, and a block fails the task with GUARDRAIL_BLOCKED; an
 * upstream's own tasks (examples/tasks-native, examples/modern --tasks) get theirs checked as they
 * are read through the gateway. A task made through a virtual server passes that server's own list
 * too (its result as the call ends, its asks as they are made), whichever endpoint its answers come by.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { exampleConfig, startGateway, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { modern, tasksUpstream, waitStatus } from '../support/tasks.js';

const NATIVE = resolve(import.meta.dirname, '../../examples/tasks-native/server.mjs');
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
/** Each upstream's own tasks are cut to this many bytes (size): what shows their reads were checked. */
const CUT = { name: 'size', maxBytes: 5 };
/** The virtual server whose own list (secrets on asks too, and a cut at 7 bytes) the gateway's own tasks made through it pass. */
const CHECKED = '/checked';

let fixture: HttpServerProcess;
let gw: RunningGateway;
const clients: Client[] = [];

beforeAll(async () => {
  fixture = await startStatelessFixture(['--tasks']);
  gw = await startGateway(
    exampleConfig({
      tasks: { pollIntervalMs: 100 },
      interceptors: [{ name: 'secrets', phases: ['response'] }],
      upstreams: [
        tasksUpstream({ interceptors: [{ name: 'pii', action: 'block', phases: ['response'] }] }),
        stdioUpstream('native', NATIVE, { prefix: 'n', interceptors: [CUT] }),
        httpUpstream('modern', fixture.url, { prefix: 'm', interceptors: [CUT] }),
      ],
      servers: [
        {
          path: CHECKED,
          tools: ['slow_compute', 'confirm_delete'],
          interceptors: [{ name: 'secrets' }, { name: 'size', maxBytes: 7 }],
        },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
  await fixture?.stop();
});

async function connect(url: URL = gw.url): Promise<Client> {
  const client = new Client({ name: 'guardrail-tasks', version: '1' }, { capabilities: { elicitation: {} } });
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return client;
}

/** A task-augmented call through the SDK's stream, to its end: the task's id and the last message. */
async function runTask(client: Client, name: string, args: Record<string, unknown>) {
  const seen: Array<{ type: string; [k: string]: any }> = [];
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  }))
    seen.push(m as never);
  expect(seen[0]!.type).toBe('taskCreated');
  return { taskId: String(seen[0]!.task.taskId), last: seen.at(-1)! };
}

describe("the gateway's own tasks", () => {
  it('2025-11-25: tasks/result gives the result as the guardrails left it', async () => {
    const client = await connect();
    const { taskId, last } = await runTask(client, 'slow_compute', { seconds: 0, label: AWS_KEY });
    expect(toolText(last.result)).toBe('[REDACTED:aws-access-key]: computed for 0 s');
    const read = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(toolText(read)).toBe('[REDACTED:aws-access-key]: computed for 0 s');
  });

  it('2025-11-25: a block fails the task with GUARDRAIL_BLOCKED, and its result never leaves', async () => {
    const client = await connect();
    const { taskId } = await runTask(client, 'slow_compute', { seconds: 0, label: 'bob@example.com' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('failed');
    const err = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    );
    expect(err?.code).toBe(ERRORS.GUARDRAIL_BLOCKED.code);
    expect(JSON.stringify(err)).not.toContain('bob@example.com');
  });

  it('2026-07-28: tasks/get inlines the result as the guardrails left it', async () => {
    const created = (
      await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: AWS_KEY } })
    ).result;
    expect(created).toMatchObject({ resultType: 'task' });
    const done = await waitStatus(gw, created.taskId);
    expect(done.status).toBe('completed');
    expect(toolText(done.result)).toBe('[REDACTED:aws-access-key]: computed for 0 s');
    expect(JSON.stringify(done)).not.toContain(AWS_KEY);
  });
});

describe("the gateway's own tasks made through a virtual server", () => {
  /** The gateway as a client of /checked sees it (the stateless helpers post to `url`). */
  const checked = (): RunningGateway => ({ ...gw, url: new URL(CHECKED, gw.base) });

  it("2025-11-25: the result passes the endpoint's list as the call ends", async () => {
    const client = await connect(checked().url);
    const { taskId, last } = await runTask(client, 'slow_compute', { seconds: 0, label: 'plain' });
    expect(toolText(last.result)).toBe('plain: [TRUNCATED:16 bytes]');
    const read = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(toolText(read)).toBe('plain: [TRUNCATED:16 bytes]');
  });

  it("2026-07-28: tasks/get inlines the result as the endpoint's list left it", async () => {
    const created = (
      await modern(checked(), 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'plain' } })
    ).result;
    expect(created).toMatchObject({ resultType: 'task' });
    const done = await waitStatus(checked(), created.taskId);
    expect(done.status).toBe('completed');
    expect(toolText(done.result)).toBe('plain: [TRUNCATED:16 bytes]');
  });

  it("on the main path the same task is not cut (the list is the endpoint's alone)", async () => {
    const created = (
      await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'plain' } })
    ).result;
    const done = await waitStatus(gw, created.taskId);
    expect(toolText(done.result)).toBe('plain: computed for 0 s');
  });

  it("2026-07-28: its ask passes the endpoint's list, and so does its result when answered by the main path", async () => {
    const created = (
      await modern(checked(), 'tools/call', { name: 'confirm_delete', arguments: { filename: AWS_KEY } })
    ).result;
    const task = await waitStatus(checked(), created.taskId, ['input_required']);
    expect(task.status).toBe('input_required');
    const [key] = Object.keys(task.inputRequests);
    expect(task.inputRequests[key!].params.message).toBe('Delete [REDACTED:aws-access-key]?');
    // The answer comes by the main path: the call goes on with the list of the endpoint that made the task.
    await modern(gw, 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { [key!]: { action: 'accept', content: { confirm: true } } },
    });
    const done = await waitStatus(gw, created.taskId);
    expect(done.status).toBe('completed');
    expect(toolText(done.result)).toMatch(/^deleted\[TRUNCATED:\d+ bytes\]$/);
    expect(JSON.stringify(done)).not.toContain(AWS_KEY);
  });
});

describe("an upstream's own tasks, passed through", () => {
  it("2025-11-25: tasks/result passes the upstream's list (and the top level's) as it is read", async () => {
    const client = await connect();
    const { taskId, last } = await runTask(client, 'n__native_slow', { seconds: 0 });
    expect(toolText(last.result)).toBe('slept[TRUNCATED:4 bytes]');
    const read = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(toolText(read)).toBe('slept[TRUNCATED:4 bytes]');
  });

  it("2026-07-28: tasks/get's inlined result passes them too", async () => {
    const created = (await modern(gw, 'tools/call', { name: 'm__native_task', arguments: { seconds: 0 } })).result;
    expect(created.taskId.startsWith('u.')).toBe(true);
    const done = await waitStatus(gw, created.taskId);
    expect(done.status).toBe('completed');
    expect(toolText(done.result)).toBe('nativ[TRUNCATED:21 bytes]');
  });
});
