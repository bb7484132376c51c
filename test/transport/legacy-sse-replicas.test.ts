/**
 * Legacy HTTP+SSE without affinity: two replicas on one Redis, the SSE stream held by replica A
 * and every POST sent to replica B. B checks each POST and hands it over the bus to A, which
 * runs it and writes every reply on the stream.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.js';
import { startGateway, toolText } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { connectClient, everythingConfig, sdkFlow } from './connection-flow.js';

let redis: RedisServer;
let replicas: RunningGateway[] = [];
let client: Client;
const posts = { a: 0, b: 0 };

/** The SDK's fetch, with every POST sent to replica B instead of the stream's replica A. */
function postsToB(a: RunningGateway, b: RunningGateway): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (init?.method === 'POST') {
      const target = new URL(url.pathname + url.search, b.base);
      if (target.origin === new URL(a.base).origin) posts.a++;
      else posts.b++;
      return fetch(target, init);
    }
    return fetch(url, init);
  };
}

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(2, { ...everythingConfig(), sessions: { redisUrl: redis.url } } as never, (c) =>
    startGateway(everythingConfig(c)),
  );
  const [a, b] = replicas as [RunningGateway, RunningGateway];
  client = await connectClient(
    'split-client',
    new SSEClientTransport(new URL('/sse', a.base), { fetch: postsToB(a, b) }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('legacy HTTP+SSE across two replicas (stream on A, POSTs to B)', () => {
  it('initialized through B', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mcp-gateway' });
    expect(posts.b).toBeGreaterThanOrEqual(2); // initialize, notifications/initialized
    expect(posts.a).toBe(0);
  });

  // The cancel check counts in-flight calls on the replica that runs them: A, the stream's.
  sdkFlow(
    () => replicas[0]!,
    () => client,
    'split-client',
  );

  it('sent every POST to B, and A answered them all on its stream', async () => {
    const before = posts.b;
    const r = await client.callTool({ name: 'slow__sleep', arguments: { ms: 1, steps: 0 } });
    expect(toolText(r)).toBe('slept 1ms');
    expect(posts.b).toBe(before + 1);
    expect(posts.a).toBe(0);
  });
});
