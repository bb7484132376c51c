/**
 * Per-session catalogs: in mode per-session each session's lists come from its own worker,
 * initialized with the client's capabilities, so two clients that declare different ones see
 * different tools. A tool the session's own worker lacks is unknown to that session (the
 * gateway's typed -32602), and never reaches the worker. A virtual server's view (a rename, a
 * selection) applies over the session's own lists. Upstream: a raw stdio MCP server that offers
 * `needs_sampling` only to clients declaring sampling and records every call it runs; clients:
 * the official SDK v1.
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingUpstream } from '../support/everything.js';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { capabilityToolsUpstream } from '../support/capability-tools.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { roundRobinFetch, startReplicas } from '../support/replicas.js';

const dir = mkdtempSync(join(tmpdir(), 'per-session-catalogs-'));
const CALLS = join(dir, 'calls.log');

let gw: RunningGateway;
const clients: Client[] = [];

async function connect(
  url: URL,
  capabilities: Record<string, Record<string, never>>,
  fetch?: typeof globalThis.fetch,
): Promise<Client> {
  const client = new Client({ name: 'catalogs', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(url, fetch ? { fetch } : undefined));
  clients.push(client);
  return client;
}

const CAPS_UPSTREAM = capabilityToolsUpstream('caps', CALLS);

const calls = () => (existsSync(CALLS) ? readFileSync(CALLS, 'utf8').trim().split('\n') : []);

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      upstreams: [CAPS_UPSTREAM],
      servers: [
        {
          name: 'picked',
          path: '/mcp/picked',
          tools: ['caps__needs_sampling'],
          overrides: { caps__needs_sampling: { name: 'sample-it' } },
        },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
});

describe('per-session catalogs', () => {
  it("two sessions with different capabilities see their own workers' tools", async () => {
    const sampler = await connect(gw.url, { sampling: {} });
    const plain = await connect(gw.url, {});
    expect((await sampler.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'caps__always',
      'caps__needs_sampling',
    ]);
    expect((await plain.listTools()).tools.map((t) => t.name)).toEqual(['caps__always']);
    expect(toolText(await sampler.callTool({ name: 'caps__needs_sampling', arguments: { n: 1 } }))).toBe(
      'needs_sampling ran',
    );
  });

  it('a tool the own worker lacks is the typed unknown-tool error, and the worker never sees the call', async () => {
    const plain = await connect(gw.url, {});
    const before = calls().length;
    const err = await plain.callTool({ name: 'caps__needs_sampling', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toContain('Unknown tool: caps__needs_sampling');
    expect(calls().length).toBe(before);
    expect(toolText(await plain.callTool({ name: 'caps__always', arguments: {} }))).toBe('always ran');
  });

  it("the session's own tools keep their argument checks", async () => {
    const sampler = await connect(gw.url, { sampling: {} });
    const err = await sampler
      .callTool({ name: 'caps__needs_sampling', arguments: { n: 'one' } })
      .catch((e: unknown) => e);
    expect((err as McpError).code).toBe(-32602);
  });

  it("a virtual server's selection and rename apply over the session's own lists", async () => {
    const url = new URL('/mcp/picked', gw.base);
    const sampler = await connect(url, { sampling: {} });
    const plain = await connect(url, {});
    expect((await sampler.listTools()).tools.map((t) => t.name)).toEqual(['sample-it']);
    expect(toolText(await sampler.callTool({ name: 'sample-it', arguments: {} }))).toBe('needs_sampling ran');
    expect((await plain.listTools()).tools).toEqual([]);
    const err = await plain.callTool({ name: 'sample-it', arguments: {} }).catch((e: unknown) => e);
    expect((err as McpError).code).toBe(-32602);
  });
});

describe('per-session catalogs on 3 replicas (Redis, round-robin)', () => {
  let redis: RedisServer;
  const replicas: RunningGateway[] = [];
  const hits = [0, 0, 0];

  beforeAll(async () => {
    redis = await startRedis();
    replicas.push(...(await startReplicas(3, { sessions: { redisUrl: redis.url }, upstreams: [CAPS_UPSTREAM] })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
  });

  it("every replica lists a session's own worker's tools, wherever that worker runs", async () => {
    const rr = roundRobinFetch(replicas, hits);
    const sampler = await connect(replicas[0]!.url, { sampling: {} }, rr);
    const plain = await connect(replicas[0]!.url, {}, rr);
    for (let i = 0; i < 3; i++) {
      expect((await sampler.listTools()).tools.map((t) => t.name).sort()).toEqual([
        'caps__always',
        'caps__needs_sampling',
      ]);
      expect((await plain.listTools()).tools.map((t) => t.name)).toEqual(['caps__always']);
      expect(toolText(await sampler.callTool({ name: 'caps__needs_sampling', arguments: {} }))).toBe(
        'needs_sampling ran',
      );
      const err = await plain.callTool({ name: 'caps__needs_sampling', arguments: {} }).catch((e: unknown) => e);
      expect((err as McpError).code).toBe(-32602);
    }
    for (const h of hits) expect(h).toBeGreaterThan(2);
  });
});

describe('per-session catalogs over server-everything (its sampling tool is for sampling clients only)', () => {
  let ev: RunningGateway;

  beforeAll(async () => {
    ev = await startGateway(
      exampleConfig({ upstreams: [everythingUpstream('everything', { mode: 'per-session', pool: { max: 4 } })] }),
    );
  }, 30_000);

  afterAll(async () => {
    await ev?.stop();
  });

  it('a client without sampling is not offered trigger-sampling-request, and calling it is the typed unknown tool', async () => {
    const sampler = await connect(ev.url, { sampling: {} });
    const plain = await connect(ev.url, {});
    expect((await sampler.listTools()).tools.map((t) => t.name)).toContain('everything__trigger-sampling-request');
    const names = (await plain.listTools()).tools.map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names).not.toContain('everything__trigger-sampling-request');
    const err = await plain
      .callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hi' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toContain('Unknown tool: everything__trigger-sampling-request');
  });
});
