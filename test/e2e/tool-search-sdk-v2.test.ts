/**
 * Tool search with the official v2 SDK client pinned to 2026-07-28: list, search, call_tool with
 * progress, and an aborted call_tool ending the real call in the gateway. `expose: list_changed` is
 * on and changes nothing here: a stateless request has no session to keep found tools in.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

let gw: RunningGateway;
let client: Client;

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({ toolSearch: { enabled: true, pinned: ['slow__p*'], expose: 'list_changed' } }),
  );
  client = new Client(
    { name: 'v2-tool-search', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(gw.url));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.stop();
});

describe('tool search, SDK v2 at 2026-07-28', () => {
  it('lists pinned + 2, finds and calls through call_tool with progress', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'slow__pid']);
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'add numbers', limit: 2 } });
    expect((found.structuredContent as { tools: Array<{ name: string }> }).tools[0]?.name).toBe('echo__add');
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'call_tool', arguments: { name: 'slow__sleep', arguments: { ms: 100, steps: 3 } } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(toolText(result)).toBe('slept 100ms');
    expect(progress).toEqual([1, 2, 3]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'slow__pid']);
  });

  it('aborting a call_tool ends the real call in the gateway', async () => {
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'call_tool', arguments: { name: 'slow__hang', arguments: {} } },
      { signal: controller.signal },
    );
    await until('the call to reach the gateway', () => internals(gw.gateway.server).inFlight === 1, 5000);
    controller.abort(new Error('user pressed stop'));
    await expect(call).rejects.toThrow();
    await until('the gateway to drop the call', () => internals(gw.gateway.server).inFlight === 0, 5000);
  });
});
