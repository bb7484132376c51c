/**
 * `execution.taskSupport: "forbidden"` as an upstream lists it (SDK v1's McpServer lists every
 * plain tool so, examples/echo): support the gateway honours whether or not it runs tasks (a call
 * of that tool never becomes a task), so the tool lists the same on a gateway without a task
 * engine and on one with `upstreams[].tasks`, to every client that speaks tasks. What the gateway
 * would not honour ("optional"/"required" of an upstream that does not run tasks itself) goes.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { modern, tasksUpstream } from '../support/tasks.js';

const NATIVE = resolve(import.meta.dirname, '../../examples/tasks-native/server.mjs');

let plain: RunningGateway;
let withTasks: RunningGateway;

beforeAll(async () => {
  [plain, withTasks] = await Promise.all([
    // examples/tasks-native runs 2025-11-25 tasks itself: passed through to 2025-11-25 sessions only.
    startGateway(exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('native', NATIVE)] })),
    startGateway(
      exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER), tasksUpstream({ prefix: 't' })], tasks: {} }),
    ),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([plain?.stop(), withTasks?.stop()]);
});

async function sessionTools(gw: RunningGateway, protocolVersion: string): Promise<Array<Record<string, any>>> {
  const init = await post(gw.url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'f', version: '1' } },
  });
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': protocolVersion };
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  const list = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, headers);
  await fetch(gw.url, { method: 'DELETE', headers });
  return list.json.result.tools;
}

const executionOf = (tools: Array<Record<string, any>>, name: string) => tools.find((t) => t.name === name)?.execution;

describe('taskSupport "forbidden"', () => {
  it('lists the same with and without tasks:, on a 2025-11-25 session and on 2026-07-28', async () => {
    for (const gw of [plain, withTasks]) {
      expect(executionOf(await sessionTools(gw, '2025-11-25'), 'echo__echo')).toEqual({ taskSupport: 'forbidden' });
      expect(executionOf((await modern(gw, 'tools/list')).result.tools, 'echo__echo')).toEqual({
        taskSupport: 'forbidden',
      });
    }
    // The gateway's own task tools still list as it runs them.
    expect(executionOf(await sessionTools(withTasks, '2025-11-25'), 't__slow_compute')).toEqual({
      taskSupport: 'optional',
    });
  });

  it('only the support the gateway would not honour goes: an upstream\'s "optional" where it is not passed through', async () => {
    const session = await sessionTools(plain, '2025-11-25');
    expect(executionOf(session, 'native__native_slow')).toEqual({ taskSupport: 'optional' });
    expect(executionOf(session, 'native__hello')).toEqual({ taskSupport: 'forbidden' });
    // 2026-07-28 gets no bridge to a 2025 upstream's tasks: its call runs as an ordinary call.
    const stateless = (await modern(plain, 'tools/list')).result.tools;
    expect(executionOf(stateless, 'native__native_slow')).toEqual({});
    expect(executionOf(stateless, 'native__hello')).toEqual({ taskSupport: 'forbidden' });
    // A session of a revision before tasks: the upstream's hint goes, "forbidden" (true of every call) stays.
    const older = await sessionTools(plain, '2025-06-18');
    expect(executionOf(older, 'native__native_slow')).toEqual({});
    expect(executionOf(older, 'echo__echo')).toEqual({ taskSupport: 'forbidden' });
  });
});
