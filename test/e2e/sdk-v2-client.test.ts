/**
 * The official v2 SDK client (@modelcontextprotocol/client, which speaks 2026-07-28) through the
 * gateway: pinned to the stateless revision, negotiating by itself ('auto'), and as a 2025
 * client ('legacy') — all on the one endpoint, at the same time as a v1 SDK session.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const TOOLS = [
  'echo__echo',
  'echo__add',
  'echo__whoami',
  'slow__sleep',
  'slow__crash',
  'slow__hang',
  'slow__pid',
  'slow__fail',
];

let gw: RunningGateway;
const clients: Array<{ close(): Promise<void> }> = [];

async function connect(
  mode: 'auto' | 'legacy' | { pin: string },
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'v2-e2e', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(gw.url);
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

beforeAll(async () => {
  gw = await startGateway();
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
});

describe('v2 SDK client, pinned to 2026-07-28', () => {
  it('connects without a session and works the whole tool flow', async () => {
    const { client, transport } = await connect({ pin: '2026-07-28' });
    expect(client.getProtocolEra()).toBe('modern');
    expect(transport.sessionId).toBeUndefined();
    expect(await gw.gateway.store.size()).toBe(0);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    expect(toolText(await client.callTool({ name: 'echo__echo', arguments: { text: 'modern hello' } }))).toBe(
      'modern hello',
    );
    expect(toolText(await client.callTool({ name: 'echo__add', arguments: { a: 2, b: 40 } }))).toBe('42');

    const failed = await client.callTool({ name: 'slow__fail', arguments: {} });
    expect(failed.isError).toBe(true);
  });

  it('streams progress of a long call to the client', async () => {
    const { client } = await connect({ pin: '2026-07-28' });
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'slow__sleep', arguments: { ms: 200, steps: 4 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(toolText(result)).toBe('slept 200ms');
    expect(progress).toEqual([1, 2, 3, 4]);
  });

  it('aborting a call ends it in the gateway (the reply stream closes)', async () => {
    const { client } = await connect({ pin: '2026-07-28' });
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow__hang', arguments: {} }, { signal: controller.signal });
    await until('the call to reach the gateway', () => internals(gw.gateway.server).inFlight === 1, 5000);
    controller.abort(new Error('user pressed stop'));
    await expect(call).rejects.toThrow();
    await until('the gateway to drop the call', () => internals(gw.gateway.server).inFlight === 0, 5000);
  });

  it('listen(): acknowledged, and told when the tool list changes', async () => {
    const { client } = await connect({ pin: '2026-07-28' });
    let changes = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changes++;
    });
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
    gw.gateway.server.listChanged('echo', 'notifications/tools/list_changed', 'a-session');
    await until('list_changed on the listen stream', () => changes === 1, 5000);
    await sub.close();
    expect(await sub.closed).toBe('local');
  });
});

describe('one endpoint, both eras at once', () => {
  it("'auto' finds the stateless revision; 'legacy' and a v1 client get 2025 sessions", async () => {
    const auto = await connect('auto');
    expect(auto.client.getProtocolEra()).toBe('modern');
    const legacy = await connect('legacy');
    expect(legacy.client.getProtocolEra()).toBe('legacy');
    expect(legacy.transport.sessionId).toMatch(/^[\x21-\x7e]+$/);
    const v1 = new V1Client({ name: 'v1', version: '1.0.0' });
    await v1.connect(new V1Transport(gw.url));
    clients.push(v1);

    const results = await Promise.all([
      auto.client.callTool({ name: 'echo__echo', arguments: { text: 'auto' } }),
      legacy.client.callTool({ name: 'echo__echo', arguments: { text: 'legacy' } }),
      v1.callTool({ name: 'echo__echo', arguments: { text: 'v1' } }),
    ]);
    expect(results.map(toolText)).toEqual(['auto', 'legacy', 'v1']);
  });
});
