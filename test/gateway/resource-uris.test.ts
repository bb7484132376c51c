/**
 * Prefixed resource URIs as units: `<prefix>+<uri>`, `ui://<prefix>+<rest>` for an MCP Apps
 * UI resource and `skill://<prefix>/<path>` for a skill's file; the inverse of each; a tool's `_meta` UI references rewritten alike (both ext-apps
 * keys) and everything else in `_meta` left as it is; and the catalog listing and routing by them.
 */
import { RESOURCE_URI_META_KEY, getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import { describe, expect, it } from 'vitest';
import { Catalog, type UpstreamLists } from '../../src/gateway/catalog.js';
import {
  LEGACY_UI_RESOURCE_KEY,
  prefixedUri,
  toolWithUiUris,
  uiResourceOf,
  unprefixedUri,
} from '../../src/gateway/resource-uris.js';

describe('prefixedUri and unprefixedUri', () => {
  it('puts the prefix inside a ui:// URI and in front of any other, and takes it off again', () => {
    const cases: Array<[string, string]> = [
      ['ui://cesium-map/mcp-app.html', 'ui://map+cesium-map/mcp-app.html'],
      ['ui:///app.html', 'ui://map+/app.html'],
      ['ui://{name}/app.html', 'ui://map+{name}/app.html'],
      ['file:///a.md', 'map+file:///a.md'],
      ['demo://resource/{id}', 'map+demo://resource/{id}'],
      // Not the scheme ext-apps' hosts look for (they test `startsWith('ui://')`): prefixed in front.
      ['UI://x/app.html', 'map+UI://x/app.html'],
      ['uix://a', 'map+uix://a'],
    ];
    for (const [original, exposed] of cases) {
      expect(prefixedUri('map', original)).toBe(exposed);
      expect(unprefixedUri('map', exposed)).toBe(original);
    }
  });

  it('gives a skill:// URI the prefix as a first path segment, so the skill keeps its last segment', () => {
    const cases: Array<[string, string]> = [
      ['skill://pdf-forms/SKILL.md', 'skill://docs/pdf-forms/SKILL.md'],
      ['skill://acme/billing/refunds/SKILL.md', 'skill://docs/acme/billing/refunds/SKILL.md'],
      ['skill://pdf-forms/references/FORMS.md', 'skill://docs/pdf-forms/references/FORMS.md'],
      ['skill://pdf-forms/', 'skill://docs/pdf-forms/'],
    ];
    for (const [original, exposed] of cases) {
      expect(prefixedUri('docs', original)).toBe(exposed);
      expect(unprefixedUri('docs', exposed)).toBe(original);
    }
    expect(unprefixedUri('docs', 'skill://docs-b/pdf-forms/SKILL.md')).toBeUndefined();
    expect(unprefixedUri('docs', 'skill://docs+pdf-forms/SKILL.md')).toBeUndefined();
  });

  it('finds no original in a URI another prefix made, or none made', () => {
    expect(unprefixedUri('map', 'ui://map-b+cesium-map/mcp-app.html')).toBeUndefined();
    expect(unprefixedUri('map', 'map-b+file:///a.md')).toBeUndefined();
    expect(unprefixedUri('map', 'ui://cesium-map/mcp-app.html')).toBeUndefined();
    expect(unprefixedUri('map', 'file:///a.md')).toBeUndefined();
    // Two prefixes where one starts the other still give distinct URIs.
    expect(prefixedUri('map', 'ui://b+x/app')).not.toBe(prefixedUri('map-b', 'ui://x/app'));
  });
});

describe('toolWithUiUris', () => {
  it('rewrites both keys, keeping the rest of _meta and of _meta.ui', () => {
    const tool = {
      name: 'show-map',
      _meta: {
        ui: { resourceUri: 'ui://cesium-map/mcp-app.html', visibility: ['model', 'app'] },
        [RESOURCE_URI_META_KEY]: 'ui://cesium-map/mcp-app.html',
        other: 1,
      },
    };
    expect(toolWithUiUris('map', tool)).toEqual({
      name: 'show-map',
      _meta: {
        ui: { resourceUri: 'ui://map+cesium-map/mcp-app.html', visibility: ['model', 'app'] },
        [RESOURCE_URI_META_KEY]: 'ui://map+cesium-map/mcp-app.html',
        other: 1,
      },
    });
    // The upstream's own entry is not altered (the catalog keeps it).
    expect(tool._meta.ui.resourceUri).toBe('ui://cesium-map/mcp-app.html');
    expect(LEGACY_UI_RESOURCE_KEY).toBe(RESOURCE_URI_META_KEY);
  });

  it('rewrites the one key present', () => {
    expect(toolWithUiUris('p', { _meta: { [RESOURCE_URI_META_KEY]: 'ui://a/b' } })).toEqual({
      _meta: { [RESOURCE_URI_META_KEY]: 'ui://p+a/b' },
    });
    expect(toolWithUiUris('p', { _meta: { ui: { resourceUri: 'ui://a/b' } } })).toEqual({
      _meta: { ui: { resourceUri: 'ui://p+a/b' } },
    });
  });

  it('passes a reference that is not a ui:// string, or no _meta at all, unchanged', () => {
    const odd: Array<Record<string, unknown>> = [
      { name: 't' },
      { name: 't', _meta: null },
      { name: 't', _meta: 'x' },
      { name: 't', _meta: { ui: { resourceUri: 42 }, [RESOURCE_URI_META_KEY]: 7 } },
      { name: 't', _meta: { ui: { resourceUri: null }, [RESOURCE_URI_META_KEY]: { uri: 'ui://a' } } },
      { name: 't', _meta: { ui: 'ui://a/b', [RESOURCE_URI_META_KEY]: ['ui://a/b'] } },
      { name: 't', _meta: { ui: { resourceUri: 'https://example.invalid/app.html' } } },
      { name: 't', _meta: { [RESOURCE_URI_META_KEY]: 'file:///app.html', ui: { visibility: ['app'] } } },
    ];
    for (const tool of odd) expect(toolWithUiUris('p', tool)).toBe(tool);
  });

  it('rewrites the ui:// key beside an odd one, leaving the odd one', () => {
    expect(toolWithUiUris('p', { _meta: { ui: { resourceUri: 42 }, [RESOURCE_URI_META_KEY]: 'ui://a/b' } })).toEqual({
      _meta: { ui: { resourceUri: 42 }, [RESOURCE_URI_META_KEY]: 'ui://p+a/b' },
    });
  });
});

describe('uiResourceOf', () => {
  it('finds the URI ext-apps’ hosts find, and nothing where they refuse or find none', () => {
    const found: Array<Record<string, unknown>> = [
      { _meta: { ui: { resourceUri: 'ui://a/b' } } },
      { _meta: { [RESOURCE_URI_META_KEY]: 'ui://a/c' } },
      { _meta: { ui: { resourceUri: 'ui://a/b' }, [RESOURCE_URI_META_KEY]: 'ui://a/c' } },
      { _meta: { ui: { visibility: ['app'] }, [RESOURCE_URI_META_KEY]: 'ui://a/c' } },
    ];
    for (const tool of found) expect(uiResourceOf(tool)).toBe(getToolUiResourceUri(tool));
    for (const tool of [{}, { _meta: {} }, { _meta: { other: 1 } }]) {
      expect(getToolUiResourceUri(tool)).toBeUndefined();
      expect(uiResourceOf(tool)).toBeUndefined();
    }
    for (const tool of [
      { _meta: { ui: { resourceUri: 42 } } },
      { _meta: { [RESOURCE_URI_META_KEY]: 'https://x/app' } },
    ]) {
      expect(() => getToolUiResourceUri(tool)).toThrow(/Invalid UI resource URI/);
      expect(uiResourceOf(tool)).toBeUndefined();
    }
  });
});

describe('a catalog of prefixed UI resources', () => {
  const app = (name: string, prefix: string, uriPrefix?: string): UpstreamLists => ({
    name,
    prefix,
    ...(uriPrefix !== undefined ? { uriPrefix } : {}),
    lists: {
      tools: [
        { name: 'show', _meta: { ui: { resourceUri: 'ui://app/view.html' }, 'ui/resourceUri': 'ui://app/view.html' } },
      ],
      resources: [{ uri: 'ui://app/view.html', mimeType: 'text/html;profile=mcp-app' }],
      resourceTemplates: [{ uriTemplate: 'ui://app/{view}.html' }],
    },
  });

  it('lists the tool, the resource and the template under one rewritten URI, routed to the original', () => {
    const catalog = new Catalog([app('a', 'a', 'a'), app('b', 'b', 'b')]);
    const tools = catalog.list('tools');
    expect(tools.map((t) => (t._meta as { ui: { resourceUri: string } }).ui.resourceUri)).toEqual([
      'ui://a+app/view.html',
      'ui://b+app/view.html',
    ]);
    expect(tools.map((t) => (t._meta as Record<string, unknown>)['ui/resourceUri'])).toEqual([
      'ui://a+app/view.html',
      'ui://b+app/view.html',
    ]);
    expect(catalog.list('resources').map((r) => r.uri)).toEqual(['ui://a+app/view.html', 'ui://b+app/view.html']);
    expect(catalog.list('resourceTemplates').map((r) => r.uriTemplate)).toEqual([
      'ui://a+app/{view}.html',
      'ui://b+app/{view}.html',
    ]);
    expect(catalog.resource('ui://b+app/view.html')).toEqual({ upstream: 'b', original: 'ui://app/view.html' });
    expect(catalog.resource('ui://a+app/other.html')).toEqual({ upstream: 'a', original: 'ui://app/other.html' });
    expect(catalog.resource('ui://app/view.html')).toBeUndefined();
    expect(catalog.resource('ui://c+app/view.html')).toBeUndefined();
    expect(catalog.resource('a+ui://app/view.html')).toBeUndefined();
  });

  it('leaves an as-is upstream’s tool _meta alone', () => {
    const catalog = new Catalog([app('a', 'a')]);
    expect(catalog.list('tools')[0]!._meta).toEqual({
      ui: { resourceUri: 'ui://app/view.html' },
      'ui/resourceUri': 'ui://app/view.html',
    });
    expect(catalog.resource('ui://app/view.html')).toEqual({ upstream: 'a', original: 'ui://app/view.html' });
  });

  it('is a function of the lists and prefixes alone: built in any order, the same catalog', () => {
    const one = new Catalog([app('a', 'a', 'a'), app('b', 'b', 'b')]);
    const two = new Catalog([app('b', 'b', 'b'), app('a', 'a', 'a')]);
    for (const kind of ['tools', 'resources', 'resourceTemplates'] as const)
      expect(JSON.stringify(two.list(kind))).toBe(JSON.stringify(one.list(kind)));
  });
});
