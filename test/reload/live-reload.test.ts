/**
 * Live config reload of one gateway process fronting server-everything, with the SDK client's
 * session open and a slow call running: by SIGHUP, by rewriting the file, and by a ConfigMap's
 * symlink swap. list_changed arrives on the session's GET stream and on a 2026-07-28 listen
 * stream, the session id stays, the slow call completes, and what the new config offers works.
 * A broken file changes nothing; a restart-only change is named in a warning and left.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, stdioUpstream, toolText } from '../support/gateway.js';
import { childrenOf, spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { LogLines, configFile, configMap, reloadCount } from '../support/reload.js';
import { everything, listenStream, watchingClient, type WatchingClient } from '../support/reload-clients.js';
import { until } from '../support/wait.js';

const SLOW = 'trigger-long-running-operation';
const BASE_TOOLS = ['echo', SLOW];

/**
 * A slow call that is running upstream when this resolves (its first progress came back). Long
 * enough to outlast a reload that starts a new server-everything first: `settled` tells.
 */
async function slowCall(
  client: Client,
  name: string,
): Promise<{ result: Promise<unknown>; readonly settled: boolean }> {
  let progressed = false;
  let settled = false;
  const result = client.callTool({ name, arguments: { duration: 10, steps: 20 } }, undefined, {
    onprogress: () => (progressed = true),
    timeout: 30_000,
  });
  void result.finally(() => (settled = true)).catch(() => undefined);
  await until('the slow call to report progress', () => progressed);
  return {
    result,
    get settled() {
      return settled;
    },
  };
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

const started: Array<{ stop(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe('reload by SIGHUP (file watch off)', () => {
  let file: ReturnType<typeof configFile>;
  let gw: GatewayProcess;
  let logs: LogLines;
  let watcher: WatchingClient;
  const config = (extra: Record<string, unknown>) => ({ reload: { watch: false }, ...extra });

  beforeAll(async () => {
    file = configFile(config({ upstreams: [everything('everything', BASE_TOOLS)] }));
    gw = await spawnGateway({}, { configFile: file.file });
    logs = new LogLines(gw.child);
    started.push({
      stop: async () => (await watcher?.client.close().catch(() => undefined), await gw.stop(), file.remove()),
    });
    watcher = await watchingClient(gw.url);
  });

  it('replaces the workers of a changed upstream while a slow call runs on the old one, and widens its tool filter', async () => {
    const { client, transport, changes } = watcher;
    const sessionId = transport.sessionId;
    expect(await toolNames(client)).toEqual(['everything__echo', `everything__${SLOW}`]);
    const listen = await listenStream(gw.url);
    const slow = await slowCall(client, `everything__${SLOW}`);
    const oldWorkers = childrenOf(gw.pid);
    expect(oldWorkers.length).toBeGreaterThan(0);
    const mark = logs.lines.length;
    // env: new workers (a process of the new config); tools: get-sum is offered now.
    file.write(
      config({ upstreams: [everything('everything', [...BASE_TOOLS, 'get-sum'], { env: { RELOADED: '1' } })] }),
    );
    expect(await reloadCount(gw.url, 'ok')).toBe(0);
    gw.child.kill('SIGHUP');
    const line = await logs.waitFor('config reloaded', mark);
    expect(line).toMatchObject({ trigger: 'signal', changed: ['everything (workers: env, tools)'] });
    expect(slow.settled).toBe(false); // still running on the replaced worker when the new one took over
    await until('list_changed on the GET stream', () => changes.includes('notifications/tools/list_changed'));
    await until('list_changed on the listen stream', () => listen.changes.includes('notifications/tools/list_changed'));
    expect(transport.sessionId).toBe(sessionId);
    expect(await toolNames(client)).toContain('everything__get-sum');
    expect(toolText(await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } }))).toContain('5');
    // The call that started on the replaced worker finishes there.
    expect(toolText((await slow.result) as Parameters<typeof toolText>[0])).toContain(
      'Long running operation completed',
    );
    // Drained, the replaced workers stop; the new ones serve.
    await until('the replaced workers to stop', () => !childrenOf(gw.pid).some((pid) => oldWorkers.includes(pid)));
    expect(childrenOf(gw.pid).length).toBeGreaterThan(0);
    expect(await reloadCount(gw.url, 'ok')).toBe(1);
    await listen.close();
  });

  it('names a restart-only change (the port) in a warning and keeps serving where it was', async () => {
    const mark = logs.lines.length;
    file.write(
      config({
        listen: { host: '127.0.0.1', port: 1 },
        upstreams: [everything('everything', [...BASE_TOOLS, 'get-sum'], { env: { RELOADED: '1' } })],
      }),
    );
    gw.child.kill('SIGHUP');
    const warning = await logs.waitFor('can change only at a restart', mark);
    expect(warning).toMatchObject({ level: 40, keys: ['listen.port'] });
    await logs.waitFor('config reloaded: nothing to change', mark);
    const { client, transport } = watcher;
    expect(transport.sessionId).toBeDefined();
    expect(
      toolText(await client.callTool({ name: 'everything__echo', arguments: { message: 'still here' } })),
    ).toContain('still here');
  });
});

describe('reload by rewriting the file', () => {
  let file: ReturnType<typeof configFile>;
  let gw: GatewayProcess;
  let logs: LogLines;
  let watcher: WatchingClient;

  beforeAll(async () => {
    file = configFile({ reload: { debounceMs: 100 }, upstreams: [everything('everything', BASE_TOOLS)] });
    gw = await spawnGateway({}, { configFile: file.file });
    logs = new LogLines(gw.child);
    started.push({
      stop: async () => (await watcher?.client.close().catch(() => undefined), await gw.stop(), file.remove()),
    });
    watcher = await watchingClient(gw.url);
  });

  it('adds an upstream while a slow call runs: list_changed, same session, the new tools work', async () => {
    const { client, transport, changes } = watcher;
    const sessionId = transport.sessionId;
    const slow = await slowCall(client, `everything__${SLOW}`);
    const mark = logs.lines.length;
    file.write({
      reload: { debounceMs: 100 },
      upstreams: [everything('everything', BASE_TOOLS), stdioUpstream('echo', ECHO_SERVER)],
    });
    expect(await logs.waitFor('config reloaded', mark)).toMatchObject({ trigger: 'file', added: ['echo'] });
    expect(slow.settled).toBe(false);
    await until('list_changed', () => changes.includes('notifications/tools/list_changed'));
    expect(transport.sessionId).toBe(sessionId);
    expect(await toolNames(client)).toEqual(expect.arrayContaining(['everything__echo', 'echo__echo', 'echo__add']));
    expect(toolText(await client.callTool({ name: 'echo__echo', arguments: { text: 'new upstream' } }))).toBe(
      'new upstream',
    );
    expect(toolText((await slow.result) as Parameters<typeof toolText>[0])).toContain(
      'Long running operation completed',
    );
  });

  it('a broken file changes nothing: the old tools still work, and the rejection is counted', async () => {
    const { client, changes } = watcher;
    const before = await toolNames(client);
    const seen = changes.length;
    const rejected = await reloadCount(gw.url, 'rejected');
    const mark = logs.lines.length;
    file.write('upstreams: [ {{ not yaml');
    await until('the rejection to be counted', async () => (await reloadCount(gw.url, 'rejected')) === rejected + 1);
    expect(await logs.waitFor('config reload rejected', mark)).toMatchObject({ level: 50 });
    // Valid YAML, but not a valid config: the same schema checks as at start-up.
    const mark2 = logs.lines.length;
    file.write({ upstreams: [everything('everything', BASE_TOOLS, { timeoutMs: 'soon' })], bogus: true });
    await until(
      'the second rejection to be counted',
      async () => (await reloadCount(gw.url, 'rejected')) === rejected + 2,
    );
    const line = await logs.waitFor('config reload rejected', mark2);
    expect(line.problems).toEqual(
      expect.arrayContaining(['bogus: unknown key', expect.stringMatching(/^upstreams\[0\]\.timeoutMs: /)]),
    );
    expect(await toolNames(client)).toEqual(before);
    expect(toolText(await client.callTool({ name: 'echo__echo', arguments: { text: 'old config' } }))).toBe(
      'old config',
    );
    expect(changes.length).toBe(seen);
  });
});

describe('reload by a ConfigMap symlink swap', () => {
  let map: ReturnType<typeof configMap>;
  let gw: GatewayProcess;
  let watcher: WatchingClient;

  beforeAll(async () => {
    map = configMap({ reload: { debounceMs: 100 }, upstreams: [everything('everything', BASE_TOOLS)] });
    gw = await spawnGateway({}, { configFile: map.file });
    started.push({
      stop: async () => (await watcher?.client.close().catch(() => undefined), await gw.stop(), map.remove()),
    });
    watcher = await watchingClient(gw.url);
  });

  it('applies the new tool filter at once, on the same workers, and keeps the session', async () => {
    const { client, transport, changes } = watcher;
    const sessionId = transport.sessionId;
    const slow = await slowCall(client, `everything__${SLOW}`);
    // server-everything announces tools of its own after a client initializes: under load that
    // list_changed can come late, so only one after the swap counts, and the list is read until it shows the filter.
    const toolChanges = () => changes.filter((m) => m === 'notifications/tools/list_changed').length;
    const before = toolChanges();
    map.swap({ reload: { debounceMs: 100 }, upstreams: [everything('everything', [SLOW, 'get-sum'])] });
    await until('list_changed', () => toolChanges() > before);
    const filtered = ['everything__get-sum', `everything__${SLOW}`];
    await until('the filtered list', async () => (await toolNames(client)).sort().join() === filtered.join());
    expect(slow.settled).toBe(false);
    expect(transport.sessionId).toBe(sessionId);
    // Filtered out now: unknown, as if it did not exist.
    await expect(client.callTool({ name: 'everything__echo', arguments: { message: 'x' } })).rejects.toThrow(
      /everything__echo/,
    );
    expect(toolText((await slow.result) as Parameters<typeof toolText>[0])).toContain(
      'Long running operation completed',
    );
    expect(await reloadCount(gw.url, 'ok')).toBe(1);
  });
});
