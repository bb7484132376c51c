/**
 * A curated virtual server on three replicas sharing one real Redis, no affinity: an SDK
 * client whose every HTTP request goes to the next replica sees the same renamed tools, its
 * fixed argument applied and its default filled on each, the unselected tool refused on each;
 * a session opened on one replica stays bound to its server and its key on the others.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, toolText, type RunningGateway } from '../support/gateway.js';
import { READER, everythingUpstream } from '../support/everything.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { roundRobinFetch, startReplicas } from '../support/replicas.js';

const KEY_A = 'key-of-team-a-81c3';
const KEY_B = 'key-of-team-b-27f9';
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

let redis: RedisServer;
const replicas: RunningGateway[] = [];
const hits = [0, 0, 0];

beforeAll(async () => {
  redis = await startRedis();
  replicas.push(
    ...(await startReplicas(3, {
      sessions: { redisUrl: redis.url },
      auth: {
        mode: 'api-key',
        apiKeys: [
          { name: 'team-a', sha256: sha256(KEY_A) },
          { name: 'team-b', sha256: sha256(KEY_B) },
        ],
      },
      upstreams: [everythingUpstream('ev')],
      servers: [{ ...READER, principals: ['team-a'] }],
    })),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('a virtual server across three replicas', () => {
  it('serves the same curated view on every replica, round-robin', async () => {
    const client = new Client({ name: 'rr', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp/reader', replicas[0]!.base), {
      fetch: roundRobinFetch(replicas, hits),
      requestInit: { headers: { authorization: `Bearer ${KEY_A}` } },
    });
    await client.connect(transport);
    try {
      for (let i = 0; i < 3; i++) {
        const tools = (await client.listTools()).tools;
        expect(tools.map((t) => t.name)).toEqual(['say', 'add-ten']);
        expect(Object.keys(tools[1]!.inputSchema.properties ?? {})).toEqual(['a']);
        expect(toolText(await client.callTool({ name: 'add-ten', arguments: { a: i } }))).toBe(
          `The sum of ${i} and 10 is ${i + 10}.`,
        );
        expect(toolText(await client.callTool({ name: 'say', arguments: {} }))).toBe('Echo: hello by default');
        const refused = await client.callTool({ name: 'ev__get-env', arguments: {} }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(McpError);
        expect((refused as McpError).message).toContain('Unknown tool: ev__get-env');
      }
      expect(hits.every((n) => n >= 3)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('keeps a session bound to its server and its key on the other replicas', async () => {
    const [a, b, c] = replicas as [RunningGateway, RunningGateway, RunningGateway];
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const opened = await post(new URL('/mcp/reader', a.base), init, { authorization: `Bearer ${KEY_A}` });
    expect(opened.status).toBe(200);
    const sid = opened.headers.get('mcp-session-id')!;
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const onB = await post(new URL('/mcp/reader', b.base), list, { ...session, authorization: `Bearer ${KEY_A}` });
    expect(onB.status, onB.text).toBe(200);
    // The main endpoint of another replica: not this session's server.
    expect((await post(c.url, list, { ...session, authorization: `Bearer ${KEY_A}` })).status).toBe(404);
    // Another team: refused at the server's door on every replica.
    for (const r of replicas)
      expect(
        (await post(new URL('/mcp/reader', r.base), list, { ...session, authorization: `Bearer ${KEY_B}` })).status,
      ).toBe(403);
    // Another team on the main endpoint with this session id: as if it did not exist.
    expect((await post(b.url, list, { ...session, authorization: `Bearer ${KEY_B}` })).status).toBe(404);
  });
});
