// A stdio MCP App server written as ext-apps tells servers to be (the v1 SDK's McpServer and
// ext-apps' own server helpers): it declares the MCP Apps extension in its capabilities, and
// offers its app tool `weather` only to a client that declares the extension with the app MIME
// type (getUiCapability), a text-only `weather` to any other. Beside it: `ui-seen`, which says
// what the client declared of the extension, and two tools whose `_meta` UI references are not
// ui:// strings (a number, an https URL), which a gateway must pass through unchanged.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  EXTENSION_ID,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
  getUiCapability,
  registerAppResource,
  registerAppTool,
} from '@modelcontextprotocol/ext-apps/server';

export const WEATHER_UI = 'ui://weather/forecast.html';

const server = new McpServer(
  { name: 'ui-app-server', version: '1.0.0' },
  { capabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
);
const text = (t) => ({ content: [{ type: 'text', text: t }] });

registerAppResource(server, 'Forecast', WEATHER_UI, {}, async () => ({
  contents: [{ uri: WEATHER_UI, mimeType: RESOURCE_MIME_TYPE, text: '<!doctype html><title>Forecast</title>' }],
}));
server.registerTool('ui-seen', { description: 'What the client declared of MCP Apps' }, async () =>
  text(JSON.stringify(getUiCapability(server.server.getClientCapabilities()) ?? null)),
);
server.registerTool(
  'odd-number',
  { description: 'A UI reference that is no string', _meta: { ui: { resourceUri: 42 }, [RESOURCE_URI_META_KEY]: 7 } },
  async () => text('odd'),
);
server.registerTool(
  'odd-scheme',
  {
    description: 'A UI reference that is not ui://',
    _meta: { ui: { resourceUri: 'https://example.invalid/app.html' }, [RESOURCE_URI_META_KEY]: 'file:///app.html' },
  },
  async () => text('odd'),
);

server.server.oninitialized = () => {
  const ui = getUiCapability(server.server.getClientCapabilities());
  if (ui?.mimeTypes?.includes(RESOURCE_MIME_TYPE)) {
    registerAppTool(
      server,
      'weather',
      { description: 'Forecast, with an app', _meta: { ui: { resourceUri: WEATHER_UI } } },
      async () => text('sunny (app)'),
    );
  } else {
    server.registerTool('weather', { description: 'Forecast, as text' }, async () => text('sunny (text)'));
  }
};

await server.connect(new StdioServerTransport());
