/**
 * Tool search over the client transports beside Streamable HTTP (issue 30: every client
 * transport), each with the official SDK v1 client: legacy HTTP+SSE (GET /sse, POST /messages)
 * and WebSocket (/ws). The list is pinned + 2, a search finds, call_tool runs with progress as a
 * direct call, and with `expose: list_changed` the session hears list_changed on its own
 * transport and lists what it found.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { wsUrl } from '../support/ws-client.js';

// Node 20 has no global WebSocket (the SDK's WebSocketClientTransport uses it): ws's is the same API.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

let gw: RunningGateway;
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({ toolSearch: { enabled: true, pinned: ['echo__echo'], expose: 'list_changed' } }),
  );
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
});

const transports: Array<[string, () => Transport]> = [
  ['legacy HTTP+SSE', () => new SSEClientTransport(new URL('/sse', gw.base))],
  ['WebSocket', () => new WebSocketClientTransport(wsUrl(gw.base))],
];

for (const [name, transport] of transports) {
  describe(`tool search over ${name} (SDK v1)`, () => {
    it('lists pinned + 2, finds, calls through call_tool with progress as directly, and exposes what it found', async () => {
      const client = new Client({ name: `tool-search-${name}`, version: '1.0.0' });
      let changes = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes++;
      });
      await client.connect(transport());
      clients.push(client);
      const listed = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await listed()).toEqual(['search_tools', 'call_tool', 'echo__echo']);

      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers', limit: 1 } });
      expect((found.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual([
        'echo__add',
      ]);
      await until('list_changed after the search', () => changes === 1, 5000);
      expect(await listed()).toEqual(['search_tools', 'call_tool', 'echo__echo', 'echo__add']);

      const add = { name: 'echo__add', arguments: { a: 20, b: 22 } };
      const through = await client.callTool({ name: 'call_tool', arguments: add });
      expect(toolText(through)).toBe('42');
      expect(through).toEqual(await client.callTool(add));

      const progress: number[] = [];
      const slept = await client.callTool(
        { name: 'call_tool', arguments: { name: 'slow__sleep', arguments: { ms: 1500, steps: 3 } } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(toolText(slept)).toBe('slept 1500ms');
      // The SDK v1 client may drop a progress that arrives in the same read as the result
      // (test/transport/connection-flow.ts): the first two, 0.5 s apart, arrive.
      expect(progress.slice(0, 2)).toEqual([1, 2]);
      // The tool it ran joined the list too.
      await until('list_changed after call_tool', () => changes === 2, 5000);
      expect(await listed()).toEqual(['search_tools', 'call_tool', 'echo__echo', 'echo__add', 'slow__sleep']);
    });
  });
}
