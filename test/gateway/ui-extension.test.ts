/**
 * The MCP Apps extension (`io.modelcontextprotocol/ui`, ext-apps' EXTENSION_ID) through the
 * gateway's capabilities, both ways, with an app server written as ext-apps says
 * (ui-app-server.mjs: it declares the extension, and offers its app tool only to a client that
 * declares it). An upstream's declaration reaches clients (2025 sessions and 2026-07-28
 * server/discover); a per-session worker hears its own client's declaration, or its absence; a
 * shared worker hears the gateway's own (it relays apps). Tools whose `_meta` UI references are
 * not ui:// strings pass through a prefixed upstream unchanged and stay callable.
 */
import { resolve } from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  EXTENSION_ID,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
  getUiCapability,
} from '@modelcontextprotocol/ext-apps/server';
import { getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, stdioUpstream, toolText, type RunningGateway } from '../support/gateway.js';

const APP_SERVER = resolve(import.meta.dirname, '../support/ui-app-server.mjs');
const WEATHER_UI = 'ui://weather/forecast.html';
const UI_CAPS = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };

let gw: RunningGateway;
const clients: Array<{ close(): Promise<void> }> = [];

async function connect(capabilities: Record<string, unknown>): Promise<Client> {
  const client = new Client({ name: 'ui-extension', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(gw.url));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('shared', APP_SERVER, { resources: { uris: 'prefixed' } }),
        stdioUpstream('mine', APP_SERVER, { prefix: 'mine', mode: 'per-session', resources: { uris: 'prefixed' } }),
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.stop();
});

const tool = async (client: Client, name: string): Promise<Tool> => {
  const found = (await client.listTools()).tools.find((t) => t.name === name);
  expect(found, name).toBeDefined();
  return found!;
};

describe('an upstream’s declaration of the extension', () => {
  it('reaches a 2025 session’s initialize result', async () => {
    const client = await connect({});
    // (A cast: ext-apps types capabilities as the v2 SDK does, the v1 client's are the same JSON.)
    const capabilities = client.getServerCapabilities() as Parameters<typeof getUiCapability>[0];
    expect(getUiCapability(capabilities)).toEqual({
      mimeTypes: [RESOURCE_MIME_TYPE],
    });
  });

  it('reaches a 2026-07-28 client’s server/discover', async () => {
    const client = new V2Client(
      { name: 'ui-extension', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new V2Transport(gw.url));
    clients.push(client);
    expect(client.getServerCapabilities()?.extensions?.[EXTENSION_ID]).toEqual({ mimeTypes: [RESOURCE_MIME_TYPE] });
  });
});

describe('a client’s declaration of the extension', () => {
  it('reaches its per-session worker, which then offers its app tool', async () => {
    const client = await connect(UI_CAPS);
    expect(JSON.parse(toolText(await client.callTool({ name: 'mine__ui-seen', arguments: {} })))).toEqual({
      mimeTypes: [RESOURCE_MIME_TYPE],
    });
    const weather = await tool(client, 'mine__weather');
    expect(getToolUiResourceUri({ _meta: weather._meta })).toBe('ui://mine+weather/forecast.html');
    const read = await client.readResource({ uri: 'ui://mine+weather/forecast.html' });
    expect(read.contents[0]).toMatchObject({ uri: 'ui://mine+weather/forecast.html', mimeType: RESOURCE_MIME_TYPE });
    expect(toolText(await client.callTool({ name: 'mine__weather', arguments: {} }))).toBe('sunny (app)');
  });

  it('is not made up for a per-session client that declares none: the text tool', async () => {
    const client = await connect({});
    expect(toolText(await client.callTool({ name: 'mine__ui-seen', arguments: {} }))).toBe('null');
    expect((await tool(client, 'mine__weather'))._meta).toBeUndefined();
    expect(toolText(await client.callTool({ name: 'mine__weather', arguments: {} }))).toBe('sunny (text)');
  });

  it('a shared worker hears the gateway’s own, so its app tool is in the shared catalog', async () => {
    const client = await connect({});
    expect(JSON.parse(toolText(await client.callTool({ name: 'shared__ui-seen', arguments: {} })))).toEqual({
      mimeTypes: [RESOURCE_MIME_TYPE],
    });
    const weather = await tool(client, 'shared__weather');
    expect(getToolUiResourceUri({ _meta: weather._meta })).toBe(`ui://shared+${WEATHER_UI.slice('ui://'.length)}`);
    expect(toolText(await client.callTool({ name: 'shared__weather', arguments: {} }))).toBe('sunny (app)');
  });
});

describe('UI references that are not ui:// strings', () => {
  it('pass through a prefixed upstream unchanged, and the tools still run', async () => {
    const client = await connect({});
    expect((await tool(client, 'shared__odd-number'))._meta).toEqual({
      ui: { resourceUri: 42 },
      [RESOURCE_URI_META_KEY]: 7,
    });
    expect((await tool(client, 'shared__odd-scheme'))._meta).toEqual({
      ui: { resourceUri: 'https://example.invalid/app.html' },
      [RESOURCE_URI_META_KEY]: 'file:///app.html',
    });
    for (const name of ['shared__odd-number', 'shared__odd-scheme'])
      expect(toolText(await client.callTool({ name, arguments: {} }))).toBe('odd');
  });
});
