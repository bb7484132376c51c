/**
 * MCP Apps across replicas: two gateway replicas sharing one Redis, each with two prefixed
 * copies of server-map, and a client whose requests alternate between them (no affinity). The
 * rewritten UI URIs are a function of config and upstream name alone, so a tool listed by one
 * replica names a resource the other lists, reads (from the right copy) and routes alike.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getToolUiResourceUri, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.js';
import { mapUpstream, markedMapServer, removeMarkedCopies } from '../support/map-server.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { roundRobinFetch, startReplicas } from '../support/replicas.js';

const PREFIXED = { resources: { uris: 'prefixed' } };
const COPY_A = markedMapServer('copy a');
const COPY_B = markedMapServer('copy b');

let redis: RedisServer;
let replicas: RunningGateway[] = [];
let client: Client;
const hits: number[] = [];

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(2, {
    sessions: { redisUrl: redis.url },
    upstreams: [mapUpstream('a', PREFIXED, COPY_A), mapUpstream('b', PREFIXED, COPY_B)],
  });
  client = new Client({ name: 'mcp-apps-replicas', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(replicas[0]!.url, { fetch: roundRobinFetch(replicas, hits) }));
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
  removeMarkedCopies();
});

/** What `call` gives, and which replica answered it (one request each). */
async function served<T>(call: () => Promise<T>): Promise<[T, number]> {
  const before = [...hits];
  const value = await call();
  const moved = replicas.map((_, i) => (hits[i] ?? 0) - (before[i] ?? 0));
  expect(moved.reduce((x, y) => x + y, 0)).toBe(1);
  return [value, moved.indexOf(1)];
}

describe('prefixed UI resources across replicas', () => {
  it('a tool listed by one replica names a resource the other lists and reads from the right copy', async () => {
    for (const [name, marker] of [
      ['a', 'copy a'],
      ['b', 'copy b'],
    ] as const) {
      const [listed, lister] = await served(() => client.listTools());
      const uri = getToolUiResourceUri({ _meta: listed.tools.find((t) => t.name === `${name}__show-map`)?._meta });
      expect(uri).toBe(`ui://${name}+cesium-map/mcp-app.html`);
      const [read, reader] = await served(() => client.readResource({ uri: uri! }));
      expect(reader).not.toBe(lister);
      expect(read.contents[0]).toMatchObject({ uri, mimeType: RESOURCE_MIME_TYPE });
      const app = read.contents[0]!;
      expect('text' in app && app.text).toContain(`<!-- ${marker} -->`);
      expect((await client.listResources()).resources.map((r) => r.uri)).toContain(uri);
    }
  });

  it('every replica lists the same tools and resources, byte for byte', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++)
      seen.add(JSON.stringify([(await client.listTools()).tools, (await client.listResources()).resources]));
    expect(seen.size).toBe(1);
  });
});
