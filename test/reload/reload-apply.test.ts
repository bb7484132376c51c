/**
 * What a reload applies, in this process (gateway.reload(), as SIGHUP calls it): a per-session
 * upstream whose workers changed hands over (sessions that have a worker keep it, new sessions
 * get the new config's), a catalog collision rejects the whole reload and stops what it started,
 * a removed upstream leaves the catalog, and live limits apply to the next request.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ECHO_SERVER, SLOW_SERVER, isAlive, openSession, post, stdioUpstream, toolText } from '../support/gateway.js';
import { childPidsRunning } from '../support/child-processes.js';
import { httpUpstream, startEchoHttp } from '../support/http-upstream.js';
import { startFromFile } from '../support/reload.js';
import { until } from '../support/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const start = (config: Record<string, unknown>) => startFromFile(config, cleanups);

async function connect(url: URL): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'reload-apply', version: '1' });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  cleanups.push(async () => void (await client.close().catch(() => undefined)));
  return { client, transport };
}

const pidOf = async (client: Client) => {
  const text = toolText(await client.callTool({ name: 'slow__pid', arguments: {} }));
  return (JSON.parse(text) as { pid: number }).pid;
};

describe('reload: per-session upstream', () => {
  it('a session keeps its worker of the old config until it ends; a new session gets the new config', async () => {
    const perSession = (env: Record<string, string>) =>
      stdioUpstream('slow', SLOW_SERVER, { mode: 'per-session', env });
    const gw = await start({ upstreams: [perSession({ ERA: 'one' })] });
    const a = await connect(gw.url);
    const oldPid = await pidOf(a.client);
    gw.file.write({ logLevel: 'silent', upstreams: [perSession({ ERA: 'two' })] });
    const result = await gw.gateway.reload();
    expect(result).toMatchObject({
      outcome: 'ok',
      diff: { changed: [{ name: 'slow', kind: 'workers', keys: ['env'] }] },
    });
    expect(await pidOf(a.client)).toBe(oldPid);
    const b = await connect(gw.url);
    const newPid = await pidOf(b.client);
    expect(newPid).not.toBe(oldPid);
    // The old session ends: its worker of the old config stops with it.
    await a.transport.terminateSession();
    await until('the old worker to stop', () => !isAlive(oldPid));
    expect(await pidOf(b.client)).toBe(newPid);
    expect(gw.gateway.reloadStatus()).toMatchObject({ count: 1, lastOutcome: 'ok', file: gw.file.file });
  });
});

describe('reload: rejected after loading', () => {
  it('a catalog collision rejects the reload: the old catalog serves, the staged workers stop', async () => {
    const gw = await start({ upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
    const { client } = await connect(gw.url);
    const before = (await client.listTools()).tools.map((t) => t.name);
    const running = childPidsRunning(ECHO_SERVER).length;
    // A second copy of echo: its resource URIs are those of the first (URIs carry no prefix).
    gw.file.write({
      logLevel: 'silent',
      upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('copy', ECHO_SERVER)],
    });
    const result = await gw.gateway.reload();
    expect(result.outcome).toBe('rejected');
    expect(result.error).toMatch(/echo:\/\//);
    expect(gw.gateway.reloadStatus()).toMatchObject({ lastOutcome: 'rejected', lastError: result.error });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(before);
    expect(toolText(await client.callTool({ name: 'echo__echo', arguments: { text: 'kept' } }))).toBe('kept');
    await until('the staged copy to stop', () => childPidsRunning(ECHO_SERVER).length === running);
    const metrics = await gw.gateway.metrics.registry.getSingleMetricAsString('mcpgw_config_reloads_total');
    expect(metrics).toContain('mcpgw_config_reloads_total{outcome="rejected"} 1');
  });
});

describe('reload: removal and limits', () => {
  it('a removed upstream leaves the catalog; its call in flight still finishes', async () => {
    const gw = await start({ upstreams: [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)] });
    const { client } = await connect(gw.url);
    const slow = client.callTool({ name: 'slow__sleep', arguments: { ms: 1500, steps: 0 } });
    await new Promise((r) => setTimeout(r, 200));
    gw.file.write({ logLevel: 'silent', upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
    expect(await gw.gateway.reload()).toMatchObject({
      outcome: 'ok',
      diff: { removed: ['slow'] },
      notified: ['notifications/tools/list_changed'],
    });
    expect((await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('slow__'))).toEqual([]);
    await expect(client.callTool({ name: 'slow__pid', arguments: {} })).rejects.toThrow(/slow__pid/);
    expect(toolText(await slow)).toBe('slept 1500ms');
  });

  it('limits.maxBatchSize applies to the next request; limits.bodyBytes waits for a restart', async () => {
    const gw = await start({ upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
    const session = await openSession(gw.url, '2025-03-26');
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' };
    const batch = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'ping' }));
    expect((await post(gw.url, batch, headers)).status).toBe(200);
    gw.file.write({
      logLevel: 'silent',
      limits: { maxBatchSize: 2, bodyBytes: 4096 },
      upstreams: [stdioUpstream('echo', ECHO_SERVER)],
    });
    const result = await gw.gateway.reload();
    expect(result).toMatchObject({
      outcome: 'ok',
      diff: { limits: ['maxBatchSize'], restartOnly: ['limits.bodyBytes'] },
      notified: [],
    });
    const refused = await post(gw.url, batch, headers);
    expect(refused.status).toBe(400);
    expect((await post(gw.url, batch.slice(0, 2), headers)).status).toBe(200);
  });
});

describe('reload: a remote upstream', () => {
  it('added by a reload, it serves and its health is watched; removed, it is gone', async () => {
    const remote = await startEchoHttp();
    cleanups.push(() => remote.stop());
    const gw = await start({ upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
    const { client } = await connect(gw.url);
    gw.file.write({
      logLevel: 'silent',
      upstreams: [stdioUpstream('echo', ECHO_SERVER), httpUpstream('remote', remote.url)],
    });
    expect(await gw.gateway.reload()).toMatchObject({ outcome: 'ok', diff: { added: [{ name: 'remote' }] } });
    expect(toolText(await client.callTool({ name: 'remote__echo', arguments: { text: 'over http' } }))).toBe(
      'over http',
    );
    // The health monitor of the upstream the reload added takes it out of the catalog when it goes down.
    await remote.kill();
    await until(
      'the remote upstream to leave the catalog',
      async () => !(await client.listTools()).tools.some((t) => t.name === 'remote__echo'),
    );
    gw.file.write({ logLevel: 'silent', upstreams: [stdioUpstream('echo', ECHO_SERVER)] });
    expect(await gw.gateway.reload()).toMatchObject({ outcome: 'ok', diff: { removed: ['remote'] } });
    const status = (await (await fetch(new URL('/readyz', gw.url))).json()) as { upstreams: Record<string, unknown> };
    expect(Object.keys(status.upstreams)).toEqual(['echo']);
  });
});

describe('reload: virtual servers', () => {
  it('a changed servers: section applies at once: the open session on the server hears list_changed, keeps its id, and calls the new name with the new fixed argument', async () => {
    const upstreams = [stdioUpstream('echo', ECHO_SERVER)];
    const team = (overrides: Record<string, unknown>) => ({
      logLevel: 'silent',
      upstreams,
      servers: [{ path: '/mcp/team', tools: ['echo__add'], overrides }],
    });
    const gw = await start(team({ echo__add: { name: 'plus', arguments: { fixed: { b: 1 } } } }));
    const { client, transport } = await connect(new URL('/mcp/team', gw.base));
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    expect(toolText(await client.callTool({ name: 'plus', arguments: { a: 1 } }))).toBe('2');
    const sid = transport.sessionId;
    await until('the GET stream', () => gw.gateway.streams.has(sid!));

    gw.file.write(team({ echo__add: { name: 'add-hundred', arguments: { fixed: { b: 100 } } } }));
    expect(await gw.gateway.reload()).toMatchObject({ outcome: 'ok', diff: { servers: true } });
    await until('tools/list_changed', () => changed > 0);
    expect(transport.sessionId).toBe(sid);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['add-hundred']);
    expect(toolText(await client.callTool({ name: 'add-hundred', arguments: { a: 1 } }))).toBe('101');
    await expect(client.callTool({ name: 'plus', arguments: { a: 1 } })).rejects.toThrow(/Unknown tool: plus/);
  });

  it('a servers: section whose override names a tool no upstream has rejects the whole reload: the added upstream stops, the servers stay', async () => {
    const upstreams = [stdioUpstream('echo', ECHO_SERVER)];
    const gw = await start({ logLevel: 'silent', upstreams, servers: [{ path: '/mcp/team', tools: ['echo__add'] }] });
    gw.file.write({
      logLevel: 'silent',
      upstreams: [...upstreams, stdioUpstream('slow', SLOW_SERVER)],
      servers: [{ path: '/mcp/team', tools: ['echo__add', 'slow__*'], overrides: { echo__nothing: { title: 'x' } } }],
    });
    const result = await gw.gateway.reload();
    expect(result.outcome).toBe('rejected');
    expect(result.error).toMatch(/echo__nothing/);
    expect(gw.gateway.reloadStatus()).toMatchObject({ lastOutcome: 'rejected' });
    await until('the staged slow worker to stop', () => childPidsRunning(SLOW_SERVER).length === 0);
    const { client } = await connect(new URL('/mcp/team', gw.base));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo__add']);
  });
});
