/** The task tests' gateway: the fixture that knows nothing of tasks, with `tasks:` on its long tools. */
import { request } from 'node:http';
import { resolve } from 'node:path';
import { exampleConfig, post, stdioUpstream, type RunningGateway } from './gateway.js';
import { statelessMeta, statelessRequest } from './stateless.js';
import type { GatewayConfig } from '../../src/config/schema.js';

export const TASKS_FIXTURE = resolve(import.meta.dirname, '../../examples/tasks/server.mjs');
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';

export function tasksUpstream(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return stdioUpstream('tasks', TASKS_FIXTURE, {
    mode: 'per-session',
    prefix: '',
    pool: { max: 16, spares: 1, idleTimeoutMs: 2000 },
    tasks: {
      tools: ['slow_compute', 'protocol_error_job', 'confirm_delete', 'multi_input'],
      requiredTools: ['failing_job', 'test_tool_with_task'],
    },
    ...extra,
  });
}

export function tasksConfig(
  overrides: Record<string, unknown> = {},
  upstream: Record<string, unknown> = {},
): GatewayConfig {
  return exampleConfig({ upstreams: [tasksUpstream(upstream)], ...overrides });
}

/** The _meta of a 2026-07-28 request from a client that declares the tasks extension (and elicitation). */
export const WITH_TASKS = statelessMeta({ elicitation: {}, extensions: { [TASKS_EXT]: {} } });

let nextId = 1;

/** A 2026-07-28 request with the tasks extension declared (unless `meta` says otherwise); the reply's JSON. */
export async function modern(
  gw: RunningGateway,
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = WITH_TASKS,
): Promise<any> {
  const headers: Record<string, string> =
    method.startsWith('tasks/') && typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {};
  const { body, headers: h } = statelessRequest(nextId++, method, { ...params, _meta: meta });
  const res = await post(gw.url, body, { ...h, ...headers });
  return res.json;
}

/** Polls tasks/get until the task's status is one of `statuses` (terminal ones always count). */
export async function waitStatus(
  gw: RunningGateway,
  taskId: string,
  statuses: string[] = [],
  timeoutMs = 10_000,
): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await modern(gw, 'tasks/get', { taskId });
    const task = res.result;
    if (task && (['completed', 'failed', 'cancelled'].includes(task.status) || statuses.includes(task.status)))
      return task;
    if (Date.now() > until) throw new Error(`task ${taskId}: still ${JSON.stringify(res)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A 2025-11-25 session: its requests' reply JSON (a 429 included), its id, and its end (DELETE). */
export type LegacySession = ((method: string, params?: Record<string, unknown>) => Promise<any>) & {
  id: string;
  end(): Promise<void>;
};

export async function legacySession(gw: RunningGateway, extra: Record<string, string> = {}): Promise<LegacySession> {
  const init = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tasks-test', version: '1' } },
    },
    extra,
  );
  const id = init.headers.get('mcp-session-id');
  if (!id) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  const headers = { ...extra, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  const rpc = async (method: string, params: Record<string, unknown> = {}) =>
    (await post(gw.url, { jsonrpc: '2.0', id: nextId++, method, params }, headers)).json;
  return Object.assign(rpc, { id, end: async () => void (await fetch(gw.url, { method: 'DELETE', headers })).text() });
}

/**
 * A 2026-07-28 request (tasks extension declared) sent from `localAddress` (a loopback address
 * such as 127.0.0.2): another anonymous client, as the gateway sees it. The reply's JSON.
 */
export function statelessFrom(
  gw: RunningGateway,
  localAddress: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<any> {
  const { body, headers } = statelessRequest(nextId++, method, { ...params, _meta: WITH_TASKS });
  if (method.startsWith('tasks/') && typeof params.taskId === 'string') headers['mcp-name'] = params.taskId;
  const text = JSON.stringify(body);
  return new Promise((resolveReply, reject) => {
    const req = request(
      gw.url,
      {
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => {
          try {
            resolveReply(JSON.parse(data));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.once('error', reject);
    req.end(text);
  });
}
