/**
 * Tool search under a live reload: an added upstream's tools are found by the next search (a new
 * catalog version, a new index), and a virtual server's toolSearch follows the reload at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_SERVER, SLOW_SERVER, stdioUpstream } from '../support/gateway.js';
import { startFromFile } from '../support/reload.js';
import { postStateless } from '../support/stateless.js';

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
