/**
 * Pass-through on the 2026-07-28 wire: an upstream that runs tasks itself through the tasks
 * extension (examples/modern/server.mjs --tasks, a real child process over Streamable HTTP). Its
 * flat CreateTaskResult leaves with the task id wrapped; tasks/get and tasks/cancel with the
 * wrapped id reach it with its own id (and Mcp-Name set to it: the fixture checks); a forged id
 * is -32602. Without the extension on the request, the call is an ordinary one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { statelessMeta } from '../support/stateless.js';
import { TASKS_EXT, modern, waitStatus } from '../support/tasks.js';

let fixture: HttpServerProcess;
let gw: RunningGateway;

beforeAll(async () => {
  fixture = await startStatelessFixture(['--tasks']);
  gw = await startGateway(exampleConfig({ upstreams: [httpUpstream('modern', fixture.url, { prefix: '' })] }));
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await fixture?.stop();
});

describe("pass-through of a 2026-07-28 upstream's own tasks", () => {
  it('server/discover names the extension; a task is created upstream, its id wrapped, polled to its result', async () => {
    const discover = await modern(gw, 'server/discover');
    expect(discover.result.capabilities.extensions).toHaveProperty([TASKS_EXT]);
    const created = (await modern(gw, 'tools/call', { name: 'native_task', arguments: { seconds: 1 } })).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created.taskId.startsWith('u.')).toBe(true);
    const got = (await modern(gw, 'tasks/get', { taskId: created.taskId })).result;
    expect(got).toMatchObject({ resultType: 'complete', taskId: created.taskId, status: 'working' });
    const done = await waitStatus(gw, created.taskId);
    expect(done).toMatchObject({ taskId: created.taskId, status: 'completed' });
    expect(done.result.content[0].text).toBe('native task done after 1 s');
  });

  it('cancel reaches the upstream; without the extension the call is ordinary; forged ids are -32602', async () => {
    const created = (await modern(gw, 'tools/call', { name: 'native_task', arguments: { seconds: 60 } })).result;
    const ack = (await modern(gw, 'tasks/cancel', { taskId: created.taskId })).result;
    expect(ack.resultType).toBe('complete');
    expect(Object.keys(ack).filter((k) => k !== '_meta')).toEqual(['resultType']);
    expect((await modern(gw, 'tasks/get', { taskId: created.taskId })).result.status).toBe('cancelled');
    const sync = (await modern(gw, 'tools/call', { name: 'native_task', arguments: { seconds: 0 } }, statelessMeta({})))
      .result;
    expect(sync.content[0].text).toBe('ran 0 s without a task');
    const [, body] = created.taskId.split('.');
    for (const forged of [`u.${body}.AAAA`, 'u.x.y', `${created.taskId}x`]) {
      expect((await modern(gw, 'tasks/get', { taskId: forged })).error.code).toBe(-32602);
    }
    // No task engine here (no upstreams[].tasks): an id that is not wrapped is unknown, not a missing method.
    expect((await modern(gw, 'tasks/get', { taskId: 'plain-id' })).error.code).toBe(-32602);
    // Without the extension on the request: -32021 before any lookup.
    expect((await modern(gw, 'tasks/get', { taskId: created.taskId }, statelessMeta({}))).error.code).toBe(-32021);
  });
});
