/**
 * Replacing the virtual servers at runtime (`gateway.setServers`, what a config reload calls):
 * an open session on a server hears tools/list_changed, keeps its id, and lists the new
 * selection; a bad set changes nothing; a server taken away answers 404 SERVER_NOT_FOUND.
 */
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEntryConfig } from '../../src/config/schema.js';
import { ServerViewsError } from '../../src/gateway/server-views.js';
import { connectClient } from '../support/everything.js';
import { exampleConfig, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

let gw: RunningGateway;
const servers = (list: unknown[]): ServerEntryConfig[] => exampleConfig({ servers: list }).servers;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      servers: [
        { path: '/mcp/team', tools: ['echo__echo'] },
        { path: '/mcp/other', tools: ['slow__*'] },
      ],
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
});

describe('setServers', () => {
  it('tells an open session, which keeps its id and sees the new selection and overrides', async () => {
    const { client, transport } = await connectClient(new URL('/mcp/team', gw.base));
    try {
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed++;
      });
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo__echo']);
      const sid = transport.sessionId;
      // The session's GET stream must be open to hear anything unasked.
      await until('the GET stream', () => gw.gateway.streams.has(sid!));

      expect(() =>
        gw.gateway.setServers(
          servers([{ path: '/mcp/team', tools: ['*'], overrides: { echo__nothing: { title: 'x' } } }]),
        ),
      ).toThrow(ServerViewsError);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo__echo']);

      const result = gw.gateway.setServers(
        servers([
          {
            path: '/mcp/team',
            tools: ['echo__add'],
            overrides: { echo__add: { name: 'plus', arguments: { fixed: { b: 100 } } } },
          },
        ]),
      );
      expect(result).toEqual({ warnings: [], needsRestart: [] });
      await until('tools/list_changed', () => changed > 0, 10_000);
      expect(transport.sessionId).toBe(sid);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['plus']);
      expect(toolText(await client.callTool({ name: 'plus', arguments: { a: 1 } }))).toBe('101');
      await expect(client.callTool({ name: 'echo__echo', arguments: { text: 'x' } })).rejects.toThrow(
        /Unknown tool: echo__echo/,
      );
    } finally {
      await client.close();
    }
  });

  it('answers 404 SERVER_NOT_FOUND on the path of a server taken away', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    expect((await post(new URL('/mcp/other', gw.base), init)).status).toBe(404);
    const gone = await post(new URL('/mcp/other', gw.base), init);
    expect(gone.json.error.data.type).toBe('SERVER_NOT_FOUND');
    expect((await post(new URL('/mcp/team', gw.base), init)).status).toBe(200);
  });
});
