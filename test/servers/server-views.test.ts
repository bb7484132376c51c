/**
 * A virtual server's view over a catalog, without processes: selection, renames, arguments
 * forced and filled, names that are JavaScript's own (constructor, __proto__) treated as names,
 * and prefixed URIs routed back to the upstream's own.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { Catalog } from '../../src/gateway/catalog.js';
import { ServerView, viewProblems } from '../../src/gateway/server-views.js';
import type { RequestContext } from '../../src/contracts/request-context.js';

const catalog = new Catalog([
  {
    name: 'a',
    prefix: 'a',
    uriPrefix: 'a',
    lists: {
      tools: [
        { name: 'constructor', inputSchema: { type: 'object' } },
        {
          name: 'sum',
          inputSchema: {
            type: 'object',
            properties: { x: { type: 'number' }, y: { type: 'number' } },
            required: ['x', 'y'],
          },
        },
      ],
      resources: [{ uri: 'file:///a.md', name: 'a' }],
      resourceTemplates: [{ uriTemplate: 'file:///items/{id}', name: 'item' }],
    },
  },
]);

function view(server: Record<string, unknown>): ServerView {
  const config = resolveConfig(
    { upstreams: [{ name: 'x', transport: 'stdio', command: 'x' }], servers: [{ path: '/v', ...server }] },
    {},
  );
  return new ServerView(config.servers[0]!);
}

const ctx = { stateless: false } as RequestContext;

describe('ServerView', () => {
  it('offers a tool named constructor as any other, with no override of its own', () => {
    const v = view({ tools: ['*'], overrides: { a__sum: { name: 'plus' } } });
    expect(v.list(catalog, 'tools').map((t) => t.name)).toEqual(['a__constructor', 'plus']);
    expect(v.exposedTool('a__constructor')).toBe('a__constructor');
    expect(v.exposedTool('plus')).toBe('a__sum');
    expect(v.exposedTool('a__sum')).toBeUndefined();
    const call = (name: string) => () =>
      v.rewrite(ctx, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }, catalog);
    for (const name of ['constructor', '__proto__', 'toString', 'a__sum'])
      expect(call(name)).toThrow(`Unknown tool: ${name}`);
    expect(call('a__constructor')().params).toEqual({ name: 'a__constructor', arguments: {} });
  });

  it('forces fixed arguments over whatever the client sends, arguments or not', () => {
    const v = view({
      tools: ['a__sum'],
      overrides: { a__sum: { arguments: { fixed: { y: 1 }, defaults: { x: 5 } } } },
    });
    for (const args of [undefined, null, 'text', [1, 2], {}])
      expect(v.callArguments('a__sum', args)).toEqual({ x: 5, y: 1 });
    expect(v.callArguments('a__sum', { x: 2, y: 99 })).toEqual({ x: 2, y: 1 });
    const request = v.rewrite(
      ctx,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a__sum', arguments: { x: 3 } } },
      catalog,
    );
    expect(request.params).toEqual({ name: 'a__sum', arguments: { x: 3, y: 1 } });
    expect(v.list(catalog, 'tools')[0]!.inputSchema).toEqual({
      type: 'object',
      properties: { x: { type: 'number' } },
      required: ['x'],
    });
  });

  it('routes prefixed URIs and templates back to the upstream’s own', () => {
    expect(catalog.resource('a+file:///a.md')).toEqual({ upstream: 'a', original: 'file:///a.md' });
    expect(catalog.resource('a+file:///items/7')).toEqual({ upstream: 'a', original: 'file:///items/7' });
    expect(catalog.resource('file:///a.md')).toBeUndefined();
    expect(catalog.resource('file:///items/7')).toBeUndefined();
    const v = view({ resources: ['a+file:///items/*'] });
    expect(v.list(catalog, 'resourceTemplates').map((t) => t.uriTemplate)).toEqual(['a+file:///items/{id}']);
    expect(v.list(catalog, 'resources')).toEqual([]);
    expect(() =>
      v.rewrite(ctx, { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'a+file:///a.md' } }, catalog),
    ).toThrow(/Resource not found/);
  });

  it('checks an override against the real schema', () => {
    const servers = resolveConfig(
      {
        upstreams: [{ name: 'x', transport: 'stdio', command: 'x' }],
        servers: [{ path: '/v', tools: ['*'], overrides: { a__constructor: { arguments: { fixed: { z: 1 } } } } }],
      },
      {},
    ).servers;
    expect(viewProblems(servers, catalog, true).errors).toEqual([
      'servers[0].overrides.a__constructor.arguments.fixed.z: tool "a__constructor" has no argument "z" in its inputSchema',
    ]);
  });

  it('warns of an MCP App tool whose ui:// resource the server does not select, by the URI clients see', () => {
    const apps = new Catalog([
      {
        name: 'map',
        prefix: 'map',
        uriPrefix: 'map',
        lists: {
          tools: [
            { name: 'show', _meta: { ui: { resourceUri: 'ui://globe/app.html' } } },
            { name: 'legacy', _meta: { 'ui/resourceUri': 'ui://globe/old.html' } },
            { name: 'odd', _meta: { ui: { resourceUri: 42 } } },
          ],
          resources: [{ uri: 'ui://globe/app.html' }, { uri: 'ui://globe/old.html' }],
        },
      },
    ]);
    const servers = (resources: string[]) =>
      resolveConfig(
        {
          upstreams: [{ name: 'x', transport: 'stdio', command: 'x' }],
          servers: [{ path: '/v', tools: ['map__*'], resources, overrides: { map__show: { name: 'globe' } } }],
        },
        {},
      ).servers;
    expect(viewProblems(servers([]), apps, true).warnings).toEqual([
      'servers[0]: tool "map__show" names its app ui://map+globe/app.html, which servers[0].resources does not select',
      'servers[0]: tool "map__legacy" names its app ui://map+globe/old.html, which servers[0].resources does not select',
    ]);
    expect(viewProblems(servers(['ui://map+globe/*']), apps, true).warnings).toEqual([]);
    expect(viewProblems(servers(['ui://map+globe/*']), apps, true).errors).toEqual([]);
  });
});
