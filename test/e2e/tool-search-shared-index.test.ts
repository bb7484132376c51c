/**
 * Large tool search indexes shared through Redis (tool-search/index-share.ts), with real gateways
 * on loopback, a real Redis and the official SDK clients: the index one replica built, another
 * loads; a session's own catalog (an upstream that lists per user) is indexed for it alone and
 * never kept in Redis, while the catalog every caller shares is.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { THREAD_FROM_TOOLS } from '../../src/tool-search/search-thread.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { httpUpstream } from '../support/http-upstream.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { listedServer, type ListedServer } from '../support/listed-server.js';
import { sample } from '../support/metrics.js';
import { startPerUserUpstream, tokenExchange } from '../support/per-user-upstream.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const NAMES = [...Array.from({ length: THREAD_FROM_TOOLS + 500 }, (_, i) => `list_item_${i}`), 'zebra_report'];

let redis: RedisServer;
let listed: ListedServer;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  redis = await startRedis();
  listed = listedServer(NAMES);
}, 30_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  listed?.remove();
  await redis?.stop();
});

type Caller = Pick<Client, 'callTool'>;

const search = async (client: Caller, query: string) =>
  (
    (await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })).structuredContent as {
      tools: Array<{ name: string }>;
    }
  ).tools.map((t) => t.name);

const indexes = async (base: string | URL, origin: 'built' | 'loaded') =>
  sample(await (await fetch(new URL('/metrics', base))).text(), 'mcpgw_tool_search_indexes_total', { origin });

/** The keys of the indexes kept in Redis, once one of `tools` tools is among them (kept after its search). */
async function keptWith(tools: number): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const keys = (await redis.command('KEYS', '*toolindex:*')).split('\r\n').filter((l) => l.includes('toolindex:'));
    for (const key of keys) {
      const text = (await redis.command('GET', key)).split('\r\n')[1] ?? '{}';
      if ((JSON.parse(text) as { documentCount?: number }).documentCount === tools) return keys;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no index of ${tools} tools kept in Redis`);
}

describe('two replicas on one Redis (dist/)', () => {
  it('the index the first replica built, the second loads; both find the same tools', async () => {
    await redis.command('FLUSHALL');
    const config = {
      upstreams: [listed.upstream('big')],
      toolSearch: { enabled: true },
      sessions: { store: 'redis', redisUrl: redis.url },
    };
    const replicas: GatewayProcess[] = [];
    const clients: Client[] = [];
    for (let i = 0; i < 2; i++) {
      const replica = await spawnGateway(config);
      closers.push(() => replica.stop());
      const client = new Client({ name: `replica-${i}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(replica.url));
      closers.push(() => client.close());
      replicas.push(replica);
      clients.push(client);
    }
    const [a, b] = replicas as [GatewayProcess, GatewayProcess];
    const first = await search(clients[0]!, 'zebra report');
    expect(first[0]).toBe('big__zebra_report');
    expect(await indexes(a.url, 'built')).toBe(1);
    await keptWith(NAMES.length);
    expect(await search(clients[1]!, 'zebra report')).toEqual(first);
    expect(await indexes(b.url, 'loaded')).toBe(1);
    expect(await indexes(b.url, 'built')).toBe(0);
  }, 60_000);
});

describe('a session whose catalog is its own (an upstream that lists per user)', () => {
  let as: AuthorizationServer;
  let issuer: JwtIssuer;
  let upstream: Server;
  let gw: RunningGateway;

  beforeAll(async () => {
    [as, issuer] = await Promise.all([startAuthorizationServer(), startJwtIssuer()]);
    upstream = await startPerUserUpstream(as);
    closers.push(() => Promise.all([as.close(), issuer.close(), new Promise((r) => upstream.close(r))]));
    const oauth = tokenExchange(as, 'urn:private');
    const port = (upstream.address() as AddressInfo).port;
    gw = await startGateway(
      resolveConfig(
        {
          listen: { host: '127.0.0.1', port: 0 },
          logLevel: 'silent',
          auth: issuer.authConfig,
          upstreams: [
            listed.upstream('big'),
            httpUpstream('private', `http://127.0.0.1:${port}/mcp`, { mode: 'per-session', oauth }),
          ],
          toolSearch: { enabled: true },
          sessions: { store: 'redis', redisUrl: redis.url },
          // Tokens held for users are sealed in Redis with these.
          secrets: { keys: [{ id: 'k1', key: '${TOKEN_KEY}' }] },
        },
        { TOKEN_KEY: randomBytes(32).toString('base64') },
      ),
    );
    closers.push(() => gw.stop());
  }, 60_000);

  it('is indexed for it alone, never kept in Redis; the catalog every caller shares is', async () => {
    await redis.command('FLUSHALL');
    // A 2025 session: the search opens bob's own upstream, and ranks bob's own catalog.
    const bob = new Client({ name: 'bob', version: '1' });
    const bobHeaders = await issuer.bearer('bob');
    await bob.connect(new StreamableHTTPClientTransport(gw.url, { requestInit: { headers: bobHeaders } }));
    closers.push(() => bob.close());
    expect(await search(bob, 'whoami')).toContain('private__whoami');
    expect(await indexes(gw.base, 'built')).toBe(1);

    // A 2026-07-28 request opens no worker of its own: it ranks the shared catalog.
    const carol = new ClientV2(
      { name: 'carol', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await carol.connect(new TransportV2(gw.url, { requestInit: { headers: await issuer.bearer('carol') } }));
    closers.push(() => carol.close());
    expect((await search(carol as unknown as Caller, 'zebra report'))[0]).toBe('big__zebra_report');
    // Built, not loaded: bob's index, of the same tools (his list names what the shared one does), was not kept.
    expect(await indexes(gw.base, 'built')).toBe(2);
    expect(await indexes(gw.base, 'loaded')).toBe(0);
    // Carol's is: big's tools and private's whoami, as the shared catalog lists them.
    expect(await keptWith(NAMES.length + 1)).toHaveLength(1);
  }, 60_000);
});
