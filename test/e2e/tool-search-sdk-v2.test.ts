/**
 * Tool search with the official v2 SDK client pinned to 2026-07-28: list, search, call_tool with
 * progress, and an aborted call_tool ending the real call in the gateway. `expose: list_changed` is
 * on and changes nothing here: a stateless request has no session to keep found tools in. Then a
 * tool outside a virtual server's selection or the caller's scopes: never found, listed nor
 * callable, call_tool refused as the direct call is.
 */
import { createHash } from 'node:crypto';
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

describe("tool search, SDK v2 at 2026-07-28: the endpoint's selection and the caller's scopes", () => {
  const FULL = 'full-5d1f3b7a9c2e4d6f';
  const PLAIN = 'plain-8e2a4c6b1d3f5a7c';
  const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
  let scoped: RunningGateway;
  const clients: Client[] = [];

  beforeAll(async () => {
    scoped = await startGateway(
      exampleConfig({
        auth: {
          mode: 'api-key',
          apiKeys: [
            { name: 'full', sha256: sha256(FULL), scopes: ['mcp:slow'] },
            { name: 'plain', sha256: sha256(PLAIN) },
          ],
          toolScopes: [{ tools: ['slow__*'], scopes: ['mcp:slow'] }],
        },
        toolSearch: { enabled: true, pinned: ['slow__pid', 'echo__echo'] },
        servers: [{ path: '/mcp/echoes', tools: ['echo__*'], toolSearch: { enabled: true, pinned: ['slow__*'] } }],
      }),
    );
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await scoped?.stop();
  });

  async function connect(key: string, path = '/mcp'): Promise<Client> {
    const c = new Client(
      { name: 'v2-scopes', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const headers = { authorization: `Bearer ${key}` };
    await c.connect(new StreamableHTTPClientTransport(new URL(path, scoped.base), { requestInit: { headers } }));
    clients.push(c);
    return c;
  }

  const found = async (c: Client, query: string) =>
    (
      (await c.callTool({ name: 'search_tools', arguments: { query, limit: 10 } })).structuredContent as {
        tools: Array<{ name: string }>;
      }
    ).tools.map((t) => t.name);

  /** What a call fails with: the JSON-RPC code if the client got one, else the error's text. */
  const refusal = (call: Promise<unknown>) =>
    call.then(
      () => 'not refused',
      (e: unknown) => ((e as { code?: unknown }).code ?? String(e)) as number | string,
    );

  const sleep = { name: 'slow__sleep', arguments: { ms: 1 } };

  it('with the scope: found, listed pinned and callable through call_tool', async () => {
    const full = await connect(FULL);
    expect((await full.listTools()).tools.map((t) => t.name)).toEqual([
      'search_tools',
      'call_tool',
      'echo__echo',
      'slow__pid',
    ]);
    expect((await found(full, 'sleep milliseconds with progress'))[0]).toBe('slow__sleep');
    expect(toolText(await full.callTool({ name: 'call_tool', arguments: sleep }))).toBe('slept 1ms');
  });

  it('without it: never found nor listed, and call_tool refused with INSUFFICIENT_SCOPE as the direct call is', async () => {
    const plain = await connect(PLAIN);
    expect((await plain.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'echo__echo']);
    for (const query of ['sleep milliseconds with progress', 'slow sleep', 'process id pid'])
      expect((await found(plain, query)).filter((n) => n.startsWith('slow__'))).toEqual([]);
    expect(await refusal(plain.callTool({ name: 'call_tool', arguments: sleep }))).toBe(-32013);
    // The direct call is refused at the door (403 and a challenge naming the scope), which the v2 client reports so.
    expect(String(await refusal(plain.callTool(sleep)))).toContain('Insufficient scope: required "mcp:slow"');
  });

  it("outside a virtual server's selection: never found nor listed (a pin cannot add it), call_tool fails as the direct call", async () => {
    const full = await connect(FULL, '/mcp/echoes');
    expect((await full.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    expect((await found(full, 'sleep milliseconds with progress')).filter((n) => n.startsWith('slow__'))).toEqual([]);
    const direct = await refusal(full.callTool(sleep));
    expect(direct).toBe(-32602);
    expect(await refusal(full.callTool({ name: 'call_tool', arguments: sleep }))).toBe(direct);
    expect(
      toolText(
        await full.callTool({ name: 'call_tool', arguments: { name: 'echo__echo', arguments: { text: 'in' } } }),
      ),
    ).toBe('in');
  });
});
