/**
 * With auth on, a task belongs to the principal whose token created it: another principal's
 * tasks/get, tasks/cancel, tasks/update (2026-07-28) and tasks/get, tasks/result, tasks/cancel
 * (2025-11-25) of that id get -32602 "not found", exactly as an unknown id does, and its
 * tasks/list does not show it. The same principal reaches it from another session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { post, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { statelessRequest } from '../support/stateless.js';
import { WITH_TASKS, tasksConfig, tasksUpstream } from '../support/tasks.js';

/** An upstream that runs tasks itself: its task ids are wrapped, bound to the principal too. */
const NATIVE = resolve(import.meta.dirname, '../../examples/tasks-native/server.mjs');

let gw: RunningGateway;
let issuer: JwtIssuer;

beforeAll(async () => {
  issuer = await startJwtIssuer();
  gw = await startGateway(
    tasksConfig({
      auth: issuer.authConfig,
      upstreams: [tasksUpstream(), stdioUpstream('native', NATIVE, { prefix: 'n' })],
    }),
  );
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await issuer?.close();
});

let id = 1;

async function statelessAs(sub: string, method: string, params: Record<string, unknown>): Promise<any> {
  const { body, headers } = statelessRequest(id++, method, { ...params, _meta: WITH_TASKS });
  const extra: Record<string, string> = typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {};
  return (await post(gw.url, body, { ...headers, ...extra, ...(await issuer.bearer(sub)) })).json;
}

type Rpc = ((method: string, params: Record<string, unknown>) => Promise<any>) & { end(): Promise<void> };

async function sessionOf(sub: string): Promise<Rpc> {
  const auth = await issuer.bearer(sub);
  const init = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: sub, version: '1' } },
    },
    auth,
  );
  const headers = {
    ...auth,
    'mcp-session-id': init.headers.get('mcp-session-id')!,
    'mcp-protocol-version': '2025-11-25',
  };
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  const rpc = async (method: string, params: Record<string, unknown>) =>
    (await post(gw.url, { jsonrpc: '2.0', id: id++, method, params }, headers)).json;
  return Object.assign(rpc, { end: async () => void (await fetch(gw.url, { method: 'DELETE', headers })).text() });
}

describe('tasks are bound to their principal', () => {
  it("2026-07-28: another principal's id is not found, for every method", async () => {
    const created = (await statelessAs('alice', 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } }))
      .result;
    const unknown = (await statelessAs('mallory', 'tasks/get', { taskId: 'no-such-task' })).error;
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const error = (await statelessAs('mallory', method, { taskId: created.taskId, inputResponses: {} })).error;
      expect(error).toEqual(unknown);
      expect(error.code).toBe(-32602);
    }
    // Still Alice's, still running: mallory's cancel did nothing.
    expect((await statelessAs('alice', 'tasks/get', { taskId: created.taskId })).result.status).toBe('working');
    await statelessAs('alice', 'tasks/cancel', { taskId: created.taskId });
  });

  it("2025-11-25: another principal's id is not found and not listed; the same principal's other session sees it", async () => {
    const alice = await sessionOf('alice');
    const created = (await alice('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} })).result
      .task;
    const mallory = await sessionOf('mallory');
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect((await mallory(method, { taskId: created.taskId })).error.code).toBe(-32602);
    }
    expect((await mallory('tasks/list', {})).result.tasks).toEqual([]);
    const aliceAgain = await sessionOf('alice');
    expect((await aliceAgain('tasks/get', { taskId: created.taskId })).result.status).toBe('working');
    expect((await aliceAgain('tasks/list', {})).result.tasks.map((t: { taskId: string }) => t.taskId)).toContain(
      created.taskId,
    );
    expect((await aliceAgain('tasks/cancel', { taskId: created.taskId })).result.status).toBe('cancelled');
  });

  it("2025-11-25: ending the session that runs a task's call fails the task", async () => {
    const alice = await sessionOf('alice');
    const created = (await alice('tools/call', { name: 'slow_compute', arguments: { seconds: 30 }, task: {} })).result
      .task;
    await alice.end();
    const aliceAgain = await sessionOf('alice');
    let task = (await aliceAgain('tasks/get', { taskId: created.taskId })).result;
    for (let i = 0; task.status === 'working' && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      task = (await aliceAgain('tasks/get', { taskId: created.taskId })).result;
    }
    expect(task.status).toBe('failed');
    expect((await aliceAgain('tasks/result', { taskId: created.taskId })).error).toMatchObject({ code: -32007 });
  });

  it("pass-through (an upstream's own task, wrapped id): another principal gets -32602; the same principal's other session reaches it", async () => {
    const alice = await sessionOf('alice');
    const created = (await alice('tools/call', { name: 'n__native_slow', arguments: { seconds: 30 }, task: {} })).result
      .task;
    expect(created.taskId.startsWith('u.')).toBe(true);
    const mallory = await sessionOf('mallory');
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect((await mallory(method, { taskId: created.taskId })).error.code).toBe(-32602);
    }
    const aliceAgain = await sessionOf('alice');
    expect((await aliceAgain('tasks/get', { taskId: created.taskId })).result).toMatchObject({
      taskId: created.taskId,
      status: 'working',
    });
    expect((await aliceAgain('tasks/cancel', { taskId: created.taskId })).result.status).toBe('cancelled');
  });
});
