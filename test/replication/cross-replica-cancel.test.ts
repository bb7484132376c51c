/**
 * Without affinity, a client's notifications/cancelled may reach another replica than the one
 * holding the request: it is carried over the bus (Redis pub/sub) and still cancels it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, openSession, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { internals } from '../../src/gateway/internals.js';

let redis: RedisServer;
const replicas: RunningGateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
  replicas.push(...(await startReplicas(2, { sessions: { redisUrl: redis.url } })));
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe('cancellation across replicas', () => {
  it('cancels a request held by replica A when the cancellation reaches replica B', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a.url);
    const session = { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const pending = fetch(a.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'long',
        method: 'tools/call',
        params: { name: 'slow__sleep', arguments: { ms: 20_000, steps: 0 } },
      }),
    }).then(async (r) => (await r.json()) as { error?: { code: number; data?: { type?: string } } });
    for (let i = 0; i < 100 && internals(a.gateway.server).inFlight === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(internals(a.gateway.server).inFlight).toBe(1);

    const cancel = await fetch(b.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'long', reason: 'changed my mind' },
      }),
    });
    expect(cancel.status).toBe(202);
    const reply = await pending;
    expect(reply.error).toMatchObject({ code: -32007, data: { type: 'REQUEST_CANCELLED' } });
    expect(internals(a.gateway.server).inFlight).toBe(0);
  });

  it('leaves another session’s request with the same id alone', async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const mine = await openSession(a.url);
    const theirs = await openSession(a.url);
    const call = (sid: string) =>
      fetch(a.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'slow__sleep', arguments: { ms: 600, steps: 0 } },
        }),
      }).then(async (r) => (await r.json()) as { result?: unknown; error?: { code: number } });
    const p1 = call(mine);
    const p2 = call(theirs);
    for (let i = 0; i < 100 && internals(a.gateway.server).inFlight < 2; i++)
      await new Promise((r) => setTimeout(r, 20));
    await fetch(b.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': mine, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }),
    });
    expect((await p1).error?.code).toBe(-32007);
    expect((await p2).result).toBeDefined();
  });
});
