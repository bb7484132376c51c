/**
 * Tool search (issue 30) through a real gateway on loopback, fronting the example stdio
 * upstreams: the official SDK v1 client on the main path and on a virtual server, per-tool scopes,
 * bad input, and the 2026-07-28 stateless era.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { statelessRequest } from '../support/stateless.js';
import { until } from '../support/wait.js';
import { internals } from '../../src/gateway/internals.js';

const FULL_KEY = 'full-7c1e9a2b4d6f8e0a';
const PLAIN_KEY = 'plain-3b5d7f9a1c2e4f6a';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let gw: RunningGateway;
const clients: Client[] = [];

async function connect(key: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'tool-search-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(path, gw.base), {
    requestInit: { headers: bearer(key) },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface Found {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
}

async function search(client: Client, query: string, limit?: number): Promise<Found[]> {
  const result = await client.callTool({
    name: 'search_tools',
    arguments: limit === undefined ? { query } : { query, limit },
  });
  const found = (result.structuredContent as { tools: Found[] }).tools;
  if (found.length > 0) expect(JSON.parse(toolText(result))).toEqual(found);
  return found;
}

/** The JSON-RPC error a call fails with. */
async function failure(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  const { code, message } = err as McpError;
  return { code, message };
}

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      auth: {
        mode: 'api-key',
        apiKeys: [
          { name: 'full', sha256: sha256(FULL_KEY), scopes: ['mcp:slow'] },
          { name: 'plain', sha256: sha256(PLAIN_KEY) },
        ],
        toolScopes: [{ tools: ['slow__*'], scopes: ['mcp:slow'] }],
      },
      toolSearch: { enabled: true, pinned: ['echo__echo'], description: 'Operator words here.' },
      servers: [
        {
          path: '/mcp/echoes',
          tools: ['echo__*'],
          overrides: { echo__add: { name: 'plus' } },
          toolSearch: { enabled: true, maxResults: 3 },
        },
        { path: '/mcp/plain', tools: ['echo__*'] },
      ],
    }),
  );
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
});

describe('tool search on the main path (SDK v1)', () => {
  it('lists the pinned tools and the two gateway tools, the search tool saying what is behind it', async () => {
    const client = await connect(FULL_KEY);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', 'echo__echo']);
    const description = tools[0]!.description!;
    expect(description).toContain('8 tools');
    expect(description).toContain('echo, slow');
    expect(description).toContain('Operator words here.');
  });

  it('finds a tool by a natural-language query, with its schema', async () => {
    const client = await connect(FULL_KEY);
    const found = await search(client, 'wait for some milliseconds while reporting progress');
    expect(found[0]?.name).toBe('slow__sleep');
    expect(found[0]?.inputSchema).toMatchObject({ type: 'object', properties: { ms: {}, steps: {} } });
    expect((await search(client, 'sum of two numbers'))[0]?.name).toBe('echo__add');
    expect(await search(client, 'zzzqqq xylophone')).toEqual([]);
    expect(await search(client, 'numbers text process', 1)).toHaveLength(1);
  });

  it('call_tool runs the tool as a direct call does, progress included; a direct call still works', async () => {
    const client = await connect(FULL_KEY);
    const progress: number[] = [];
    const through = await client.callTool(
      { name: 'call_tool', arguments: { name: 'slow__sleep', arguments: { ms: 100, steps: 3 } } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2, 3]);
    const direct = await client.callTool({ name: 'slow__sleep', arguments: { ms: 100, steps: 3 } });
    expect(through).toEqual(direct);
    const add = { name: 'echo__add', arguments: { a: 2, b: 3 } };
    expect(await client.callTool({ name: 'call_tool', arguments: add })).toEqual(await client.callTool(add));
  });

  it('cancelling a call_tool (notifications/cancelled of its id) ends the real call', async () => {
    const client = await connect(FULL_KEY);
    const controller = new AbortController();
    const call = client.callTool({ name: 'call_tool', arguments: { name: 'slow__hang' } }, undefined, {
      signal: controller.signal,
    });
    await until('the call to reach the gateway', () => internals(gw.gateway.server).inFlight === 1, 5000);
    controller.abort(new Error('stop'));
    await expect(call).rejects.toThrow();
    await until('the gateway to drop the call', () => internals(gw.gateway.server).inFlight === 0, 5000);
  });

  it('argument validation applies through call_tool as on a direct call', async () => {
    const client = await connect(FULL_KEY);
    const bad = { name: 'echo__add', arguments: { a: 'two' } };
    const direct = await failure(client.callTool(bad));
    expect(await failure(client.callTool({ name: 'call_tool', arguments: bad }))).toEqual(direct);
  });

  it("a tool outside the caller's scopes is never found, and call_tool fails as tools/call does", async () => {
    const client = await connect(PLAIN_KEY);
    const found = await search(client, 'sleep milliseconds progress', 10);
    expect(found.map((t) => t.name).filter((n) => n.startsWith('slow__'))).toEqual([]);
    // A direct call is refused by the transport (HTTP 403 with a challenge); call_tool's by the same policy, in JSON-RPC.
    const direct = await client.callTool({ name: 'slow__sleep', arguments: { ms: 1 } }).catch((e: Error) => e);
    expect(String(direct)).toContain('-32013');
    const through = await failure(
      client.callTool({ name: 'call_tool', arguments: { name: 'slow__sleep', arguments: { ms: 1 } } }),
    );
    expect(through.code).toBe(-32013);
    expect(through.message).toContain('Forbidden: calling slow__sleep');
    const unknown = await failure(client.callTool({ name: 'nope' }));
    expect(await failure(client.callTool({ name: 'call_tool', arguments: { name: 'nope' } }))).toEqual(unknown);
  });

  it('bad input is INVALID_PARAMS', async () => {
    const client = await connect(FULL_KEY);
    const searches: unknown[] = [
      {},
      { query: '' },
      { query: '   ' },
      { query: 7 },
      { query: 'x'.repeat(1001) },
      { query: 'a\u0000b' },
      { query: 'a\u001bb' },
      { query: 'echo', limit: 0 },
      { query: 'echo', limit: 11 },
      { query: 'echo', limit: 1.5 },
      { query: 'echo', limit: '3' },
    ];
    for (const args of searches)
      expect(
        (await failure(client.callTool({ name: 'search_tools', arguments: args as Record<string, unknown> }))).code,
        JSON.stringify(args),
      ).toBe(-32602);
    expect((await search(client, 'x'.repeat(1000))).length).toBeGreaterThanOrEqual(0);
    const calls: unknown[] = [
      {},
      { name: '' },
      { name: 'call_tool' },
      { name: 'search_tools', arguments: { query: 'echo' } },
      { name: 'echo__echo', arguments: 'text' },
      { name: 'echo__echo', arguments: [1] },
    ];
    for (const args of calls)
      expect(
        (await failure(client.callTool({ name: 'call_tool', arguments: args as Record<string, unknown> }))).code,
        JSON.stringify(args),
      ).toBe(-32602);
  });

  it('counts searches and calls through call_tool', async () => {
    const metrics = await (await fetch(new URL('/metrics', gw.base))).text();
    expect(metrics).toMatch(/mcpgw_tool_searches_total\{endpoint="\/mcp",outcome="hit"\} [1-9]/);
    expect(metrics).toMatch(/mcpgw_tool_searches_total\{endpoint="\/mcp",outcome="empty"\} [1-9]/);
    expect(metrics).toMatch(/mcpgw_tool_search_calls_total\{endpoint="\/mcp"\} [1-9]/);
  });
});

describe('tool search on a virtual server', () => {
  it('searches and calls only what the server selects, under its names', async () => {
    const client = await connect(FULL_KEY, '/mcp/echoes');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    expect(tools[0]!.description).toContain('3 tools');
    expect(tools[0]!.description).not.toContain('slow');
    expect((await search(client, 'add two numbers'))[0]?.name).toBe('plus');
    expect((await search(client, 'sleep milliseconds progress')).map((t) => t.name)).not.toContain('slow__sleep');
    const plus = await client.callTool({ name: 'call_tool', arguments: { name: 'plus', arguments: { a: 1, b: 2 } } });
    expect(plus).toEqual(await client.callTool({ name: 'plus', arguments: { a: 1, b: 2 } }));
    const direct = await failure(client.callTool({ name: 'slow__sleep', arguments: { ms: 1 } }));
    const through = await failure(
      client.callTool({ name: 'call_tool', arguments: { name: 'slow__sleep', arguments: { ms: 1 } } }),
    );
    expect(through).toEqual(direct);
    expect((await failure(client.callTool({ name: 'search_tools', arguments: { query: 'x', limit: 4 } }))).code).toBe(
      -32602,
    );
  });

  it('a server without toolSearch lists as before', async () => {
    const client = await connect(FULL_KEY, '/mcp/plain');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['echo__echo', 'echo__add', 'echo__whoami']);
  });
});

describe('tool search in the 2026-07-28 stateless era', () => {
  it('lists, searches and calls through call_tool', async () => {
    const auth = bearer(FULL_KEY);
    const list = await postStatelessAuth(1, 'tools/list', {}, auth);
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'search_tools',
      'call_tool',
      'echo__echo',
    ]);
    const found = await postStatelessAuth(
      2,
      'tools/call',
      { name: 'search_tools', arguments: { query: 'echo text back' } },
      auth,
    );
    expect(found.json.result.structuredContent.tools[0].name).toBe('echo__echo');
    const called = await postStatelessAuth(
      3,
      'tools/call',
      { name: 'call_tool', arguments: { name: 'echo__add', arguments: { a: 4, b: 5 } } },
      auth,
    );
    const direct = await postStatelessAuth(4, 'tools/call', { name: 'echo__add', arguments: { a: 4, b: 5 } }, auth);
    expect(called.json.result).toEqual(direct.json.result);
    const bad = await postStatelessAuth(5, 'tools/call', { name: 'search_tools', arguments: { query: '' } }, auth);
    expect(bad.json.error.code).toBe(-32602);
  });
});

function postStatelessAuth(
  id: number,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
) {
  const req = statelessRequest(id, method, params);
  return post(gw.url, req.body, { ...req.headers, ...headers });
}
