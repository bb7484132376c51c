/**
 * MCP Apps through the gateway: the official example app @modelcontextprotocol/server-map over
 * stdio, an official SDK client, and ext-apps' own helpers to read what a host reads. For each
 * `resources.uris` mode a host finds the tool's UI resource (`_meta.ui.resourceUri` and the
 * older `_meta["ui/resourceUri"]`), a `ui://` URI, reads the app's HTML under it and calls the
 * tool; the same through a virtual server that renames the tool; and two prefixed copies offer
 * distinct apps, each read from its own upstream.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  getToolUiResourceUri,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { MAP_UI_URI, mapUpstream, markedMapServer, removeMarkedCopies } from '../support/map-server.js';

const PREFIXED = { resources: { uris: 'prefixed' } };
const COPY_A = markedMapServer('copy map');
const COPY_B = markedMapServer('copy map-b');

let gw: RunningGateway;
const clients: Array<{ close(): Promise<void> }> = [];

async function connect(path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'mcp-apps-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.base)));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [mapUpstream('plain'), mapUpstream('map', PREFIXED, COPY_A), mapUpstream('map-b', PREFIXED, COPY_B)],
      servers: [
        {
          path: '/mcp/plain-globe',
          tools: ['plain__show-map'],
          resources: ['ui://cesium-map/*'],
          overrides: { 'plain__show-map': { name: 'globe' } },
        },
        {
          path: '/mcp/map-globe',
          tools: ['map__show-map'],
          resources: ['ui://map+*'],
          overrides: { 'map__show-map': { name: 'globe', title: 'Globe' } },
        },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
  removeMarkedCopies();
});

/** The tool's UI resource as a host finds it: ext-apps' helper (which refuses anything but ui://), both keys agreeing. */
function uiResourceOf(tool: Tool): string {
  // (Only its _meta: ext-apps types a tool as the v2 SDK does.)
  const uri = getToolUiResourceUri({ _meta: tool._meta });
  expect(uri).toMatch(/^ui:\/\//);
  expect(tool._meta?.[RESOURCE_URI_META_KEY]).toBe(uri);
  return uri!;
}

async function toolNamed(client: Client, name: string): Promise<Tool> {
  const tool = (await client.listTools()).tools.find((t) => t.name === name);
  expect(tool, name).toBeDefined();
  return tool!;
}

/** What a host does with an app tool: read its UI resource, then call it. */
async function hostsApp(client: Client, name: string, expectedUri: string): Promise<string> {
  const uri = uiResourceOf(await toolNamed(client, name));
  expect(uri).toBe(expectedUri);
  expect((await client.listResources()).resources.map((r) => r.uri)).toContain(uri);
  const read = await client.readResource({ uri });
  expect(read.contents).toHaveLength(1);
  const app = read.contents[0]!;
  expect(app).toMatchObject({ uri, mimeType: RESOURCE_MIME_TYPE });
  expect('text' in app && app.text).toMatch(/<title>CesiumJS Globe<\/title>/);
  const called = await client.callTool({ name, arguments: { west: 2.2, south: 48.8, east: 2.5, north: 48.9 } });
  expect(called.isError).toBeFalsy();
  expect(toolText(called)).toMatch(/^Displaying globe at: W:2\.2000, S:48\.8000, E:2\.5000, N:48\.9000/);
  return 'text' in app ? String(app.text) : '';
}

describe('an MCP App through the gateway, for each URI mode', () => {
  it('as-is: the tool names the upstream’s own ui:// URI, and it reads', async () => {
    await hostsApp(await connect(), 'plain__show-map', MAP_UI_URI);
  });

  it('prefixed: the prefix goes inside the ui:// URI, which the tool names, lists and reads', async () => {
    const html = await hostsApp(await connect(), 'map__show-map', 'ui://map+cesium-map/mcp-app.html');
    expect(html).toContain('<!-- copy map -->');
  });

  it('the URI as the upstream knows it, and the old outside prefix, are no URIs of a prefixed copy', async () => {
    const client = await connect();
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris.filter((u) => !u.startsWith('ui://'))).toEqual([]);
    expect(uris.filter((u) => u === MAP_UI_URI)).toHaveLength(1); // plain's, not map's
    await expect(client.readResource({ uri: `map+${MAP_UI_URI}` })).rejects.toThrow(/Resource not found/);
  });

  it('a rewritten URI naming no upstream gets the typed not-found error', async () => {
    const client = await connect();
    const err = await client.readResource({ uri: 'ui://nosuch+cesium-map/mcp-app.html' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32002);
  });
});

describe('through a virtual server that renames the tool', () => {
  it('as-is: the renamed tool keeps naming the app, which reads there', async () => {
    await hostsApp(await connect('/mcp/plain-globe'), 'globe', MAP_UI_URI);
  });

  it('prefixed: the renamed tool names the prefixed ui:// URI, which reads there', async () => {
    const client = await connect('/mcp/map-globe');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['globe']);
    const html = await hostsApp(client, 'globe', 'ui://map+cesium-map/mcp-app.html');
    expect(html).toContain('<!-- copy map -->');
    // Only what it selects: the other copy's app is not offered there.
    await expect(client.readResource({ uri: 'ui://map-b+cesium-map/mcp-app.html' })).rejects.toThrow(
      /Resource not found/,
    );
  });
});

describe('two copies of one app, URIs prefixed', () => {
  it('offers distinct apps, each read from its own upstream', async () => {
    const client = await connect();
    const a = uiResourceOf(await toolNamed(client, 'map__show-map'));
    const b = uiResourceOf(await toolNamed(client, 'map-b__show-map'));
    expect([a, b]).toEqual(['ui://map+cesium-map/mcp-app.html', 'ui://map-b+cesium-map/mcp-app.html']);
    const html = async (uri: string) => {
      const c = (await client.readResource({ uri })).contents[0]!;
      expect(c.uri).toBe(uri);
      return 'text' in c ? String(c.text) : '';
    };
    const [htmlA, htmlB] = [await html(a), await html(b)];
    expect(htmlA).toContain('<!-- copy map -->');
    expect(htmlA).not.toContain('<!-- copy map-b -->');
    expect(htmlB).toContain('<!-- copy map-b -->');
  });
});

describe('a 2026-07-28 client (the v2 SDK, stateless)', () => {
  it('finds, reads and calls the prefixed app as a 2025 session does', async () => {
    const client = new V2Client(
      { name: 'mcp-apps-e2e', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new V2Transport(gw.url));
    clients.push(client);
    const tool = (await client.listTools()).tools.find((t) => t.name === 'map-b__show-map');
    const uri = getToolUiResourceUri(tool!);
    expect(uri).toBe('ui://map-b+cesium-map/mcp-app.html');
    expect(tool!._meta?.[RESOURCE_URI_META_KEY]).toBe(uri);
    const app = (await client.readResource({ uri: uri! })).contents[0]!;
    expect(app).toMatchObject({ uri, mimeType: RESOURCE_MIME_TYPE });
    expect('text' in app && app.text).toContain('<!-- copy map-b -->');
    const called = await client.callTool({ name: 'map-b__show-map', arguments: {} });
    expect(toolText(called)).toMatch(/^Displaying globe at: W:-0\.5000/);
  });
});
