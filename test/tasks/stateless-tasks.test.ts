/**
 * The 2026-07-28 tasks extension (SEP-2663) through the gateway, in front of a stdio server
 * that knows nothing of tasks: flat CreateTaskResult, tasks/get with the result or error
 * inlined, the empty acks of tasks/cancel and tasks/update, input inside a task, and the
 * refusals (-32021 without the extension, -32602 for unknown ids, -32601 for the 2025 methods).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { MODERN_META, statelessMeta } from '../support/stateless.js';
import { TASKS_EXT, modern, tasksConfig, waitStatus } from '../support/tasks.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(tasksConfig({ tasks: { pollIntervalMs: 500 } }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

describe('2026-07-28 tasks', () => {
  it('advertises the extension (and no 2025 tasks capability) and marks task tools in tools/list', async () => {
    const discover = await modern(gw, 'server/discover');
    expect(discover.result.capabilities.extensions).toEqual({ [TASKS_EXT]: {} });
    expect(discover.result.capabilities.tasks).toBeUndefined();
    const list = await modern(gw, 'tools/list');
    const support = Object.fromEntries(list.result.tools.map((t: any) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({ greet: undefined, slow_compute: 'optional', failing_job: 'required' });
  });

  it('creates a flat task at once, readable at once, and inlines the result when done', async () => {
    const created = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'x' } }))
      .result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 500 });
    expect(created.taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(Number.isInteger(created.ttlMs)).toBe(true);
    for (const key of ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval'])
      expect(created).not.toHaveProperty(key);
    expect(created.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    const now = (await modern(gw, 'tasks/get', { taskId: created.taskId })).result;
    expect(now).toMatchObject({ resultType: 'complete', taskId: created.taskId, status: 'working' });
    const done = await waitStatus(gw, created.taskId);
    expect(done.status).toBe('completed');
    expect(done.result.content[0].text).toBe('x: computed for 1 s');
    expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
  });

  it('a tool error is completed with isError; a JSON-RPC error is failed with the error inlined', async () => {
    const toolError = (await modern(gw, 'tools/call', { name: 'failing_job', arguments: {} })).result;
    expect(toolError.resultType).toBe('task');
    const protocolError = (await modern(gw, 'tools/call', { name: 'protocol_error_job', arguments: {} })).result;
    const [a, b] = await Promise.all([waitStatus(gw, toolError.taskId), waitStatus(gw, protocolError.taskId)]);
    expect(a).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(b).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(b.error.message).toContain('protocol_error_job: internal failure');
    expect(b).not.toHaveProperty('result');
  });

  it('cancel acks empty, the running call ends cancelled at once; a second cancel acks too', async () => {
    const created = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    const ack = await modern(gw, 'tasks/cancel', { taskId: created.taskId });
    expect(Object.keys(ack.result).sort()).toEqual(['_meta', 'resultType']);
    expect(ack.result.resultType).toBe('complete');
    const after = (await modern(gw, 'tasks/get', { taskId: created.taskId })).result;
    expect(after.status).toBe('cancelled');
    expect((await modern(gw, 'tasks/cancel', { taskId: created.taskId })).result.resultType).toBe('complete');
  });

  it('input inside a task: input_required with inputRequests, answered by tasks/update, then completed', async () => {
    const created = (await modern(gw, 'tools/call', { name: 'multi_input', arguments: {} })).result;
    let task = await waitStatus(gw, created.taskId, ['input_required']);
    for (let i = 0; Object.keys(task.inputRequests ?? {}).length < 2 && i < 50; i++)
      task = (await modern(gw, 'tasks/get', { taskId: created.taskId })).result;
    expect(task.status).toBe('input_required');
    const [first, second] = Object.keys(task.inputRequests);
    expect(task.inputRequests[first!].method).toBe('elicitation/create');
    // Unknown keys are ignored, with the same empty ack.
    expect(
      (await modern(gw, 'tasks/update', { taskId: created.taskId, inputResponses: { nope: { action: 'accept' } } }))
        .result.resultType,
    ).toBe('complete');
    await modern(gw, 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { [first!]: { action: 'accept', content: { name: 'one', confirm: true } } },
    });
    const partial = (await modern(gw, 'tasks/get', { taskId: created.taskId })).result;
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual([second]);
    await modern(gw, 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { [second!]: { action: 'accept', content: { name: 'two', confirm: true } } },
    });
    const done = await waitStatus(gw, created.taskId);
    expect(done.status).toBe('completed');
    expect(done.result.content[0].text).toContain('"name":"one"');
    expect(done.result.content[0].text).toContain('"name":"two"');
  });

  it('a required tool asks for input by input_required rounds first, then becomes a task', async () => {
    const meta = statelessMeta({ elicitation: {}, extensions: { [TASKS_EXT]: {} } });
    const round = (await modern(gw, 'tools/call', { name: 'test_tool_with_task', arguments: {} }, meta)).result;
    expect(round.resultType).toBe('input_required');
    expect(round).not.toHaveProperty('taskId');
    const key = Object.keys(round.inputRequests)[0]!;
    const retry = {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { name: 'Alice' } } },
      requestState: round.requestState,
    };
    const created = (await modern(gw, 'tools/call', retry, meta)).result;
    expect(created.resultType).toBe('task');
    expect(created).not.toHaveProperty('requestState');
    expect(created).not.toHaveProperty('inputRequests');
    const done = await waitStatus(gw, created.taskId);
    expect(done.result.content[0].text).toMatch(/Alice/);
  });

  it('without the extension: optional tools run as ordinary calls, required ones and tasks/* get -32021', async () => {
    const sync = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, MODERN_META))
      .result;
    expect(sync.resultType).toBe('complete');
    expect(sync).not.toHaveProperty('taskId');
    const required = await modern(gw, 'tools/call', { name: 'failing_job', arguments: {} }, MODERN_META);
    expect(required.error.code).toBe(-32021);
    expect(required.error.data.requiredCapabilities).toEqual({ extensions: { [TASKS_EXT]: {} } });
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const res = await modern(gw, method, { taskId: 'gate-test', inputResponses: {} }, MODERN_META);
      expect(res.error.code).toBe(-32021);
    }
  });

  it('bad inputs: unknown ids -32602, removed methods -32601, a mismatched Mcp-Name -32020, a task hint on a sync tool ignored', async () => {
    expect((await modern(gw, 'tasks/get', { taskId: 'no-such-task' })).error.code).toBe(-32602);
    expect((await modern(gw, 'tasks/cancel', { taskId: 'no-such-task' })).error.code).toBe(-32602);
    expect((await modern(gw, 'tasks/update', { taskId: 'no-such-task', inputResponses: {} })).error.code).toBe(-32602);
    expect((await modern(gw, 'tasks/update', { taskId: 'no-such-task', inputResponses: 'x' })).error.code).toBe(-32602);
    expect((await modern(gw, 'tasks/result', { taskId: 'no-such-task' })).error.code).toBe(-32601);
    expect((await modern(gw, 'tasks/list', {})).error.code).toBe(-32601);
    const hinted = (await modern(gw, 'tools/call', { name: 'greet', arguments: { name: 'h' }, task: { ttl: 60000 } }))
      .result;
    expect(hinted).toMatchObject({ resultType: 'complete', content: [{ text: 'Hello, h!' }] });
    const created = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    const { body, headers } = (await import('../support/stateless.js')).statelessRequest(900, 'tasks/get', {
      taskId: created.taskId,
      _meta: { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXT]: {} } } },
    });
    const { post } = await import('../support/gateway.js');
    const mismatch = await post(gw.url, body, { ...headers, 'mcp-name': 'another-task' });
    expect(mismatch.json.error.code).toBe(-32020);
    await modern(gw, 'tasks/cancel', { taskId: created.taskId });
  });
});
