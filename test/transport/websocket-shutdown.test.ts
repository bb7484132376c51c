/**
 * SIGTERM with WebSocket calls in flight, on a replica of two sharing one real redis-server (a
 * gateway process, `dist/main.js`): the replies in flight finish within shutdown.drainMs as
 * Streamable HTTP's do (a call that ends inside it gets its result; one that would outlast it
 * gets SHUTTING_DOWN), a request sent during the drain is refused SHUTTING_DOWN at once, every
 * socket closes 1001, the process exits 0, and the other replica serves on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOW_SERVER, openSession, post, stdioUpstream } from '../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { until } from '../support/wait.js';
import { RawClient } from '../support/ws-client.js';

const DRAIN_MS = 3000;

let redis: RedisServer;
let replicas: GatewayProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  const config = {
    sessions: { redisUrl: redis.url },
    upstreams: [stdioUpstream('slow', SLOW_SERVER)],
    shutdown: { drainMs: DRAIN_MS },
  };
  replicas = await startReplicas(2, config, (c) => spawnGateway(c));
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

const sleepCall = (id: string, ms: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'slow__sleep', arguments: { ms, steps: 0 } },
});

describe('SIGTERM with WebSocket calls in flight', () => {
  it(
    'lets them finish within drainMs, refuses new ones, closes every socket 1001, exits 0',
    { timeout: 30_000 },
    async () => {
      const [a, b] = replicas as [GatewayProcess, GatewayProcess];
      const ws = await RawClient.open(a.url);
      await ws.initialize();
      const idle = await RawClient.open(a.url);
      await idle.initialize();
      ws.send(sleepCall('short', 1500));
      ws.send(sleepCall('long', 60_000));
      await new Promise((r) => setTimeout(r, 200)); // both calls under way

      a.child.kill('SIGTERM');
      await until('A draining', async () => (await fetch(new URL('/readyz', a.url))).status === 503, 2000, 20);
      ws.send({ jsonrpc: '2.0', id: 'late', method: 'ping' });
      expect(await ws.answerTo('late')).toMatchObject({ error: { code: -32009, data: { type: 'SHUTTING_DOWN' } } });

      expect(await ws.answerTo('short', DRAIN_MS)).toMatchObject({ result: { content: [{ text: 'slept 1500ms' }] } });
      expect(ws.closed).toBeUndefined(); // still open while the long call drains
      expect(await ws.answerTo('long', DRAIN_MS + 2000)).toMatchObject({
        error: { code: -32009, data: { type: 'SHUTTING_DOWN' } },
      });
      expect(await ws.closeCode(5000)).toBe(1001);
      expect(await idle.closeCode(5000)).toBe(1001);
      expect(await a.exited).toBe(0);

      // The other replica: sessions, calls and readiness as before.
      const sid = await openSession(b.url);
      const call = await post(b.url, sleepCall('after', 1), {
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-06-18',
      });
      expect(call.json.result.content[0].text).toBe('slept 1ms');
      expect((await fetch(new URL('/readyz', b.url))).status).toBe(200);
      const other = await RawClient.open(b.url);
      await other.initialize();
      other.send(sleepCall('ws-after', 1));
      expect(await other.answerTo('ws-after')).toMatchObject({ result: { content: [{ text: 'slept 1ms' }] } });
      other.ws.close();
    },
  );
});
