/**
 * notifications/tasks on 2026-07-28 listen streams (the tasks extension, SEP-2663): a
 * `subscriptions/listen` naming `taskIds` is acknowledged with the ids it follows (those the
 * client may read), then carries each task's current state and every change, each the
 * DetailedTask tasks/get gives, until the task ends; the stream's close stops the following.
 * Refusals: -32021 without the extension, -32602 past tasks.maxPerPrincipal ids or for ids that
 * are not strings; nothing is held after. A real gateway, the stdio task fixture, loopback HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { MCP_HEADERS, post, type RunningGateway, startGateway } from '../support/gateway.js';
import { MODERN_META, statelessRequest } from '../support/stateless.js';
import { SseReader } from '../support/sse.js';
import { WITH_TASKS, modern, tasksConfig, waitStatus } from '../support/tasks.js';
import { until } from '../support/wait.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(tasksConfig({ tasks: { pollIntervalMs: 200, maxPerPrincipal: 5 } }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
});

function listenRequest(id: string, notifications: Record<string, unknown>, meta: Record<string, unknown> = WITH_TASKS) {
  return statelessRequest(id, 'subscriptions/listen', { notifications, _meta: meta });
}

async function listen(
  id: string,
  notifications: Record<string, unknown>,
): Promise<{ reader: SseReader; ack: any; close(): Promise<void> }> {
  const { body, headers } = listenRequest(id, notifications);
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  const ack = JSON.parse((await reader.next())!.data);
  return { reader, ack, close: () => reader.cancel() };
}

/** The next notifications/tasks on the stream, as its params without _meta. */
async function nextTask(reader: SseReader): Promise<Record<string, unknown>> {
  for (;;) {
    const ev = await reader.next(10_000);
    if (!ev) throw new Error('the listen stream ended');
    if (!ev.data) continue;
    const m = JSON.parse(ev.data);
    if (m.method !== 'notifications/tasks') continue;
    const { _meta, ...task } = m.params;
    expect(_meta['io.modelcontextprotocol/subscriptionId']).toBeDefined();
    return task;
  }
}

/** What tasks/get says of the task now, as a notification carries it (no resultType, no _meta). */
async function getTask(taskId: string): Promise<Record<string, unknown>> {
  const { resultType: _r, _meta, ...task } = (await modern(gw, 'tasks/get', { taskId })).result;
  return task;
}

const listenStreams = async () => {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  return Number(/^mcpgw_sse_streams_open\{kind="listen"\} (\d+)/m.exec(text)?.[1] ?? 0);
};

describe('subscriptions/listen with taskIds', () => {
  it('acknowledges the ids it follows, then sends each task as tasks/get gives it, at once and at every change', async () => {
    const done = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'a' } }))
      .result;
    const cancelled = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    const stream = await listen('l1', {
      taskIds: [done.taskId, cancelled.taskId, 'no-such-task', done.taskId],
      toolsListChanged: true,
    });
    expect(stream.ack.method).toBe('notifications/subscriptions/acknowledged');
    expect(stream.ack.params.notifications).toEqual({
      toolsListChanged: true,
      taskIds: [done.taskId, cancelled.taskId],
    });
    const first = [await nextTask(stream.reader), await nextTask(stream.reader)];
    expect(first.map((t) => [t.taskId, t.status])).toEqual([
      [done.taskId, 'working'],
      [cancelled.taskId, 'working'],
    ]);
    expect(first[0]).toMatchObject({ ttlMs: done.ttlMs, pollIntervalMs: 200, createdAt: done.createdAt });

    const completed = await nextTask(stream.reader);
    expect(completed).toMatchObject({
      taskId: done.taskId,
      status: 'completed',
      result: { content: [{ text: 'a: computed for 1 s' }] },
    });
    expect(completed).toEqual(await getTask(done.taskId));
    expect((await modern(gw, 'tasks/cancel', { taskId: cancelled.taskId })).result.resultType).toBe('complete');
    const gone = await nextTask(stream.reader);
    expect(gone).toEqual({ ...(await getTask(cancelled.taskId)), status: 'cancelled' });
    // Both ended: nothing is followed any more, and the stream stays open for the rest it asked.
    await until('no task followed', () => internals(gw.gateway.server).tasks!.followed === 0, 5000);
    expect(await listenStreams()).toBe(1);
    await stream.close();
    await until('the listen stream to close', async () => (await listenStreams()) === 0, 5000);
  });

  it('a stream that closes follows nothing more', async () => {
    const running = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    const stream = await listen('l2', { taskIds: [running.taskId] });
    expect((await nextTask(stream.reader)).status).toBe('working');
    expect(internals(gw.gateway.server).tasks!.followed).toBe(1);
    await stream.close();
    await until(
      'the following to stop with its stream',
      () => internals(gw.gateway.server).tasks!.followed === 0,
      5000,
    );
    await modern(gw, 'tasks/cancel', { taskId: running.taskId });
  });

  it('refuses taskIds without the extension (-32021, 400), past tasks.maxPerPrincipal or not strings (-32602); nothing is held', async () => {
    const plain = listenRequest('l3', { taskIds: ['x'] }, MODERN_META);
    const r = await post(gw.url, plain.body, plain.headers);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      id: 'l3',
      error: { code: -32021, data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } },
    });
    const many = listenRequest('l4', { taskIds: ['a', 'b', 'c', 'd', 'e', 'f'] });
    const m = await post(gw.url, many.body, many.headers);
    expect(m.json).toMatchObject({ id: 'l4', error: { code: -32602 } });
    expect(m.json.error.message).toContain('tasks.maxPerPrincipal (5)');
    const bad = listenRequest('l5', { taskIds: [1, 2] });
    expect((await post(gw.url, bad.body, bad.headers)).json).toMatchObject({ id: 'l5', error: { code: -32602 } });
    expect(await listenStreams()).toBe(0);
    expect(internals(gw.gateway.server).tasks!.followed).toBe(0);
    // Another client's task runs to its end as ever.
    const other = (await modern(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'b' } }))
      .result;
    expect((await waitStatus(gw, other.taskId)).status).toBe('completed');
  });
});
