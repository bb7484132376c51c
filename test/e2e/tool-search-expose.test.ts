/**
 * Tool search's `expose: list_changed` (issue 30): the tools a 2025 session found join its
 * tools/list (the most recent `exposeMax`) and it hears notifications/tools/list_changed; a tool
 * outside the caller's scopes never joins; a stateless request changes nothing. With the SDK v1
 * client against one gateway, and against two replicas sharing sessions in Redis (round-robin).
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { roundRobinFetch, startReplicas } from '../support/replicas.js';
import { statelessRequest } from '../support/stateless.js';
import { until } from '../support/wait.js';
import { RawClient } from '../support/ws-client.js';

const FULL_KEY = 'full-5e2a7c9b1d3f4a6e';
const PLAIN_KEY = 'plain-8d4b6f0a2c1e3a5b';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const PINNED = 'echo__echo';
const MAX = 3;

const settings = {
  auth: {
    mode: 'api-key',
    apiKeys: [
      { name: 'full', sha256: sha256(FULL_KEY), scopes: ['mcp:slow'] },
      { name: 'plain', sha256: sha256(PLAIN_KEY) },
    ],
    toolScopes: [{ tools: ['slow__*'], scopes: ['mcp:slow'] }],
  },
  toolSearch: { enabled: true, pinned: [PINNED], expose: 'list_changed', exposeMax: MAX },
};

const clients: Client[] = [];

interface Session {
  client: Client;
  /** notifications/tools/list_changed heard so far. */
  changes: () => number;
}

async function connect(url: URL, key: string, fetcher?: typeof fetch): Promise<Session> {
  const client = new Client({ name: 'tool-search-expose', version: '1.0.0' });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: bearer(key) },
    ...(fetcher ? { fetch: fetcher } : {}),
  });
  await client.connect(transport);
  clients.push(client);
  return { client, changes: () => changes };
}

async function search(client: Client, query: string, limit: number): Promise<string[]> {
  const result = await client.callTool({ name: 'search_tools', arguments: { query, limit } });
  return (result.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
}

const listed = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

/** What the session's list should show after finding `found` in order: the most recent MAX, pinned left out. */
function expected(found: readonly string[]): string[] {
  const kept: string[] = [];
  for (const name of found) {
    if (name === PINNED) continue;
    const at = kept.indexOf(name);
    if (at !== -1) kept.splice(at, 1);
    kept.push(name);
  }
  return ['search_tools', 'call_tool', PINNED, ...kept.slice(-MAX)];
}

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
});

describe('expose: list_changed on one gateway (SDK v1)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(exampleConfig(settings));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a search adds what it found to the list and the session hears list_changed; the bound holds', async () => {
    const { client, changes } = await connect(gw.url, FULL_KEY);
    expect(await listed(client)).toEqual(['search_tools', 'call_tool', PINNED]);
    const found: string[] = [];
    found.push(...(await search(client, 'add two numbers', 1)));
    expect(found).toEqual(['echo__add']);
    await until('list_changed after the first search', () => changes() === 1, 5000);
    expect(await listed(client)).toEqual(expected(found));

    // Found again: nothing new to list, no list_changed (checked after the next change arrives).
    await search(client, 'add two numbers', 1);
    found.push(...(await search(client, 'sleep milliseconds progress', 2)));
    await until('list_changed after the second search', () => changes() >= 2, 5000);
    expect(await listed(client)).toEqual(expected(found));
    expect(changes()).toBe(2);

    // call_tool's tool is found too; the list keeps the most recent MAX.
    await client.callTool({ name: 'call_tool', arguments: { name: 'slow__pid' } });
    found.push('slow__pid');
    await until('list_changed after call_tool', () => changes() === 3, 5000);
    const now = await listed(client);
    expect(now).toEqual(expected(found));
    expect(now).toHaveLength(3 + MAX);
    // A listed found tool is called by its own name, as a listed tool is.
    const sum = await client.callTool({ name: 'echo__add', arguments: { a: 2, b: 3 } });
    expect(sum.isError).toBeFalsy();
  });

  it("a tool outside the caller's scopes never joins the list", async () => {
    const { client, changes } = await connect(gw.url, PLAIN_KEY);
    const found = await search(client, 'sleep milliseconds progress crash hang pid fail', 10);
    expect(found.filter((n) => n.startsWith('slow__'))).toEqual([]);
    const refused = await client
      .callTool({ name: 'call_tool', arguments: { name: 'slow__pid' } })
      .catch((e: unknown) => e);
    expect((refused as McpError).code).toBe(-32013);
    if (found.some((n) => n !== PINNED)) await until('list_changed', () => changes() >= 1, 5000);
    const list = await listed(client);
    expect(list.filter((n) => n.startsWith('slow__'))).toEqual([]);
    expect(list).toEqual(expected(found));
  });

  it('a stateless (2026-07-28) request keeps nothing: its list stays pinned + 2', async () => {
    const headers = bearer(FULL_KEY);
    const call = (id: number, method: string, params: Record<string, unknown>) => {
      const req = statelessRequest(id, method, params);
      return post(gw.url, req.body, { ...req.headers, ...headers });
    };
    const found = await call(1, 'tools/call', { name: 'search_tools', arguments: { query: 'add two numbers' } });
    expect(found.json.result.structuredContent.tools[0].name).toBe('echo__add');
    const list = await call(2, 'tools/list', {});
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['search_tools', 'call_tool', PINNED]);
  });

  it('a WebSocket session keeps its found tools too (its record held by its connection)', async () => {
    const ws = await RawClient.open(gw.base, { headers: bearer(FULL_KEY) });
    try {
      await ws.initialize();
      ws.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'call_tool', arguments: { name: 'slow__pid' } },
      });
      expect((await ws.answerTo(1)).error).toBeUndefined();
      await until('list_changed on the socket', () => ws.count('notifications/tools/list_changed') === 1, 5000);
      ws.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      const tools = ((await ws.answerTo(2)).result as { tools: Array<{ name: string }> }).tools;
      expect(tools.map((t) => t.name)).toEqual(expected(['slow__pid']));
    } finally {
      ws.ws.close();
    }
  });

  it('bad exposeMax or expose values are refused by the schema', async () => {
    for (const toolSearch of [
      { enabled: true, expose: 'always' },
      { enabled: true, exposeMax: 0 },
      { enabled: true, exposeMax: 201 },
      { enabled: true, exposeMax: 2.5 },
    ])
      expect(() => exampleConfig({ toolSearch }), JSON.stringify(toolSearch)).toThrow();
  });
});

describe('expose: list_changed on two replicas sharing sessions in Redis', () => {
  let redis: RedisServer;
  const replicas: RunningGateway[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    replicas.push(...(await startReplicas(2, { ...settings, sessions: { redisUrl: redis.url } })));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
  });

  it('what one replica found, the other lists; the session hears list_changed wherever its stream is', async () => {
    const hits = [0, 0];
    const { client, changes } = await connect(replicas[0]!.url, FULL_KEY, roundRobinFetch(replicas, hits));
    const found = await search(client, 'add two numbers', 1);
    await until('list_changed', () => changes() === 1, 5000);
    // Each list goes to the next replica in turn: both serve the session's found tools.
    for (let i = 0; i < 4; i++) expect(await listed(client)).toEqual(expected(found));
    found.push(...(await search(client, 'sleep milliseconds progress', 2)));
    await until('list_changed', () => changes() === 2, 5000);
    for (let i = 0; i < 4; i++) expect(await listed(client)).toEqual(expected(found));
    for (const h of hits) expect(h).toBeGreaterThan(4);
  }, 30_000);
});
