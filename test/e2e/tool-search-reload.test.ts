/**
 * Tool search under a live reload: an added upstream's tools are found by the next search (a new
 * catalog version, a new index), raw and through the SDK v1 and v2 clients, also on a virtual
 * server that selected them before they came; and a virtual server's toolSearch and the main path's follow the reload
 * at once.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, SLOW_SERVER, stdioUpstream, toolText } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';
import { postStateless } from '../support/stateless.js';
import { until } from '../support/wait.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('tool search under a reload', () => {
  it('finds the tools of an upstream a reload added; a server turns search on by reload', async () => {
    const echo = stdioUpstream('echo', ECHO_SERVER);
    const server = { path: '/mcp/echoes', tools: ['echo__*', 'slow__*'] };
    const gw = await startFromFile({ upstreams: [echo], toolSearch: { enabled: true }, servers: [server] }, cleanups);
    let id = 1;
    const names = async (path: string, query: string) => {
      const at = { ...gw, url: new URL(path, gw.base) };
      const res = await postStateless(at, id++, 'tools/call', { name: 'search_tools', arguments: { query } });
      return (res.json.result.structuredContent.tools as Array<{ name: string }>).map((t) => t.name);
    };
    const listed = async (path: string) => {
      const res = await postStateless({ ...gw, url: new URL(path, gw.base) }, id++, 'tools/list');
      return (res.json.result.tools as Array<{ name: string }>).map((t) => t.name);
    };
    expect(await names('/mcp', 'sleep milliseconds with progress')).not.toContain('slow__sleep');
    expect(await listed('/mcp/echoes')).toEqual(['echo__echo', 'echo__add', 'echo__whoami']);

    gw.file.write({
      logLevel: 'silent',
      upstreams: [echo, stdioUpstream('slow', SLOW_SERVER)],
      toolSearch: { enabled: true },
      servers: [{ ...server, toolSearch: { enabled: true } }],
    });
    expect(await gw.gateway.reload()).toMatchObject({ outcome: 'ok' });
    expect((await names('/mcp', 'sleep milliseconds with progress'))[0]).toBe('slow__sleep');
    expect(await listed('/mcp/echoes')).toEqual(['search_tools', 'call_tool']);
    expect((await names('/mcp/echoes', 'sleep milliseconds with progress'))[0]).toBe('slow__sleep');
  }, 30_000);
});

describe('tool search under a reload, through the SDK clients', () => {
  it('SDK v1 (a session, told list_changed) and v2 (2026-07-28) find and call what a reload added, on a virtual server too', async () => {
    const echo = stdioUpstream('echo', ECHO_SERVER);
    // A path a reload adds is served after a restart only (docs/configuration.md): this one is there from the start.
    const servers = [{ path: '/mcp/slow', tools: ['slow__*'], toolSearch: { enabled: true } }];
    const gw = await startFromFile({ upstreams: [echo], toolSearch: { enabled: true }, servers }, cleanups);
    const v1 = new Client({ name: 'tool-search-reload-v1', version: '1.0.0' });
    let changes = 0;
    v1.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    await v1.connect(new StreamableHTTPClientTransport(gw.url));
    cleanups.push(() => v1.close());
    const v2 = async (path: string) => {
      const client = new ClientV2(
        { name: 'tool-search-reload-v2', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new TransportV2(new URL(path, gw.base)));
      cleanups.push(() => client.close());
      return client;
    };
    const onMain = await v2('/mcp');
    const onServer = await v2('/mcp/slow');
    const found = async (client: Pick<Client, 'callTool'>) =>
      (
        (await client.callTool({ name: 'search_tools', arguments: { query: 'sleep milliseconds with progress' } }))
          .structuredContent as { tools: Array<{ name: string }> }
      ).tools.map((t) => t.name);
    expect(await found(v1)).not.toContain('slow__sleep');
    expect(await found(onMain as unknown as Client)).not.toContain('slow__sleep');
    expect(await found(onServer as unknown as Client)).toEqual([]);

    gw.file.write({
      logLevel: 'silent',
      upstreams: [echo, stdioUpstream('slow', SLOW_SERVER)],
      toolSearch: { enabled: true },
      servers,
    });
    expect(await gw.gateway.reload()).toMatchObject({ outcome: 'ok' });
    await until('list_changed after the reload', () => changes > 0, 5000);
    const sleep = { name: 'call_tool', arguments: { name: 'slow__sleep', arguments: { ms: 1 } } };
    for (const client of [v1, onMain, onServer] as Client[]) {
      expect((await found(client))[0]).toBe('slow__sleep');
      expect(toolText(await client.callTool(sleep))).toBe('slept 1ms');
    }
  }, 30_000);
});

describe("the main path's toolSearch under a reload", () => {
  it('turns on, changes pinned and maxResults, and turns off for the next requests; sessions hear list_changed', async () => {
    const upstreams = [stdioUpstream('echo', ECHO_SERVER), stdioUpstream('slow', SLOW_SERVER)];
    const gw = await startFromFile({ upstreams }, cleanups);
    const client = new Client({ name: 'tool-search-reload', version: '1.0.0' });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    await client.connect(new StreamableHTTPClientTransport(gw.url));
    cleanups.push(() => client.close());
    const listed = async () => (await client.listTools()).tools.map((t) => t.name);
    const everything = await listed();
    expect(everything).toHaveLength(8);
    const reload = async (toolSearch: Record<string, unknown> | undefined) => {
      const before = changes;
      gw.file.write({ logLevel: 'silent', upstreams, ...(toolSearch ? { toolSearch } : {}) });
      expect(await gw.gateway.reload()).toMatchObject({
        outcome: 'ok',
        notified: ['notifications/tools/list_changed'],
      });
      await until('list_changed after the reload', () => changes > before, 5000);
    };
    const searchLimit = async (limit: number) =>
      client.callTool({ name: 'search_tools', arguments: { query: 'add numbers', limit } }).then(
        (r) => (r.structuredContent as { tools: unknown[] }).tools.length,
        (e: unknown) => (e as McpError).code,
      );

    await reload({ enabled: true, pinned: ['echo__echo'] });
    expect(await listed()).toEqual(['search_tools', 'call_tool', 'echo__echo']);
    expect(await searchLimit(10)).toBeGreaterThan(0);

    await reload({ enabled: true, pinned: ['slow__pid'], maxResults: 2 });
    expect(await listed()).toEqual(['search_tools', 'call_tool', 'slow__pid']);
    expect(await searchLimit(3)).toBe(-32602);
    expect(await searchLimit(2)).toBeLessThanOrEqual(2);

    await reload(undefined);
    expect(await listed()).toEqual(everything);
    const off = await client.callTool({ name: 'search_tools', arguments: { query: 'x' } }).catch((e: unknown) => e);
    expect((off as McpError).code).toBe(-32602);
  }, 30_000);
});
