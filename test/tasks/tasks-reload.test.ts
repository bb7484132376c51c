/**
 * `tasks:` and `upstreams[].tasks` under a live reload (gateway.reload(), as SIGHUP calls it):
 * the limits, ttls and poll interval apply to the next task, the task tools of an upstream to the
 * next tools/list and call (the workers stay); a gateway that started with no task engine names
 * them restart-only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { diffConfigs } from '../../src/config/diff.js';
import { resolveConfig } from '../../src/config/load.js';
import { MCP_HEADERS, post } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';
import { tasksUpstream } from '../support/tasks.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const start = (config: Record<string, unknown>) => startFromFile(config, cleanups);

async function session(url: URL) {
  const init = await post(
    url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'reload', version: '1' } },
    },
    MCP_HEADERS,
  );
  const headers = {
    ...MCP_HEADERS,
    'mcp-session-id': init.headers.get('mcp-session-id')!,
    'mcp-protocol-version': '2025-11-25',
  };
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  let id = 1;
  return async (method: string, params: Record<string, unknown> = {}) =>
    (await post(url, { jsonrpc: '2.0', id: id++, method, params }, headers)).json;
}

const supportOf = async (rpc: Awaited<ReturnType<typeof session>>) =>
  Object.fromEntries((await rpc('tools/list')).result.tools.map((t: any) => [t.name, t.execution?.taskSupport]));

describe('tasks under a live reload', () => {
  it('tasks: limits and ttls apply to the next task; upstreams[].tasks to the next tools/list and call', async () => {
    const gw = await start({ upstreams: [tasksUpstream()], tasks: { pollIntervalMs: 200 } });
    const rpc = await session(gw.url);
    const first = await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} });
    expect(first.result.task).toMatchObject({ pollInterval: 200, ttl: 3_600_000 });
    expect(await supportOf(rpc)).toMatchObject({ slow_compute: 'optional', greet: undefined });

    gw.file.write({
      logLevel: 'silent',
      upstreams: [tasksUpstream({ tasks: { tools: ['greet'], requiredTools: ['slow_compute'] } })],
      tasks: { pollIntervalMs: 500, defaultTtlMs: 60_000, maxPerPrincipal: 2 },
    });
    const result = await gw.gateway.reload();
    expect(result).toMatchObject({
      outcome: 'ok',
      diff: { changed: [{ name: 'tasks', kind: 'policy', keys: ['tasks'] }], restartOnly: [] },
      notified: ['notifications/tools/list_changed'],
    });
    expect([...(result.diff?.tasks ?? [])].sort()).toEqual([
      'tasks.defaultTtlMs',
      'tasks.maxPerPrincipal',
      'tasks.pollIntervalMs',
    ]);

    expect(await supportOf(rpc)).toMatchObject({
      slow_compute: 'required',
      greet: 'optional',
      protocol_error_job: undefined,
    });
    const greet = await rpc('tools/call', { name: 'greet', arguments: { name: 'r' }, task: {} });
    expect(greet.result.task).toMatchObject({ pollInterval: 500, ttl: 60_000 });
    // A required tool now: without a task it is refused.
    expect((await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).error.code).toBe(-32601);
    // maxPerPrincipal 2: the first task and greet's hold both places.
    expect((await rpc('tools/call', { name: 'greet', arguments: { name: 'r' }, task: {} })).error.data.type).toBe(
      'TASK_LIMIT',
    );
  }, 30_000);

  it('without a task engine at start, upstreams[].tasks and tasks: are restart-only', async () => {
    const plain = tasksUpstream({ tasks: undefined });
    const gw = await start({ upstreams: [plain] });
    gw.file.write({ logLevel: 'silent', upstreams: [tasksUpstream()], tasks: { pollIntervalMs: 500 } });
    const result = await gw.gateway.reload();
    expect(result.outcome).toBe('ok');
    expect(result.diff?.restartOnly).toEqual([
      'upstreams[].tasks (no task engine: no upstream named task tools at start)',
      'tasks.pollIntervalMs',
    ]);
    const rpc = await session(gw.url);
    expect(await supportOf(rpc)).toMatchObject({ slow_compute: undefined });
  }, 30_000);

  it('the diff: tasks keys are live, upstreams[].tasks is a policy key (the workers stay)', () => {
    const cfg = (tasks: Record<string, unknown>, upstreamTasks: Record<string, unknown>) =>
      resolveConfig(
        {
          upstreams: [{ name: 'a', transport: 'stdio', command: 'node', args: ['a.mjs'], tasks: upstreamTasks }],
          tasks,
        },
        {},
      );
    const diff = diffConfigs(cfg({}, { tools: ['x'] }), cfg({ inputWindowMs: 0 }, { tools: ['y'] }));
    expect(diff).toMatchObject({
      tasks: ['tasks.inputWindowMs'],
      changed: [{ name: 'a', kind: 'policy', keys: ['tasks'] }],
      restartOnly: [],
    });
  });
});
