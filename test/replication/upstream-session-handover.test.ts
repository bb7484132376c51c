/**
 * A per-session worker on a remote (Streamable HTTP) upstream holds an upstream MCP session.
 * When the replica that owns the worker is SIGKILLed, the next replica to serve the client's
 * session takes the worker over and continues the SAME upstream session (its id is kept in
 * the session record in Redis), instead of starting a new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startEchoHttp, type HttpServerProcess } from '../support/http-upstream.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';

let redis: RedisServer;
let upstream: HttpServerProcess;
let a: GatewayProcess;
let b: GatewayProcess;

async function whoami(gw: GatewayProcess, sid: string, id: number): Promise<{ pid: number; session: string }> {
  const res = await fetch(gw.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'remote__whoami', arguments: {} },
    }),
    signal: AbortSignal.timeout(20_000),
  });
  const body = (await res.json()) as { result?: { content: Array<{ text: string }> }; error?: unknown };
  if (!body.result) throw new Error(`whoami failed: ${JSON.stringify(body)}`);
  return JSON.parse(body.result.content[0]!.text) as { pid: number; session: string };
}

beforeAll(async () => {
  redis = await startRedis();
  upstream = await startEchoHttp();
  [a, b] = (await startReplicas(
    2,
    {
      sessions: { redisUrl: redis.url, ttlSeconds: 600 },
      upstreams: [{ name: 'remote', transport: 'http', url: upstream.url, mode: 'per-session', pool: { max: 8 } }],
    },
    spawnGateway,
  )) as [GatewayProcess, GatewayProcess];
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await upstream?.stop();
  await redis?.stop();
});

describe('upstream session handover between replicas', () => {
  it('continues the upstream session after its owner replica is SIGKILLed', async () => {
    const init = await fetch(a.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    await init.text();
    const sid = init.headers.get('mcp-session-id')!;

    const first = await whoami(a, sid, 1); // the worker starts on A: A owns it
    const again = await whoami(b, sid, 2); // B forwards to A: the same upstream session
    expect(again.session).toBe(first.session);

    a.kill9();
    await a.exited;
    const after = await whoami(b, sid, 3); // B takes the worker over
    expect(after.session).toBe(first.session);
    expect(after.pid).toBe(first.pid);
  });
});
