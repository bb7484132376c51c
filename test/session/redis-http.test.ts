/**
 * A real gateway with `sessions.store: redis` on a real redis-server, over real HTTP: a Redis
 * outage turns session lookups into fast 503 SESSION_STORE_UNAVAILABLE replies and /readyz 503,
 * and the gateway recovers by itself when Redis is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

let redis: RedisServer;
let gw: RunningGateway;

async function readyz(): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL('/readyz', gw.base));
  return { status: res.status, body: await res.json() };
}

function add(sid: string, id: number) {
  return post(
    gw.url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo__add', arguments: { a: 2, b: 3 } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

beforeAll(async () => {
  redis = await startRedis();
  gw = await startGateway(exampleConfig({ sessions: { store: 'redis', redisUrl: redis.url } }));
  await until('/readyz 200', async () => (await readyz()).status === 200);
  // The keyspace-event subscription is set up just after the connection is ready.
  await until('keyspace expiry events', async () => (await readyz()).body.store?.expiryEvents === 'keyspace');
});

afterAll(async () => {
  await gw?.stop();
  await redis?.stop();
});

describe('gateway with Redis sessions', () => {
  it('serves a session from Redis, answers 503 SESSION_STORE_UNAVAILABLE while Redis is down, and recovers', async () => {
    const ready = await readyz();
    expect(ready.body.store).toMatchObject({ state: 'ready', expiryEvents: 'keyspace' });

    const sid = await openSession(gw.url);
    expect(await redis.command('EXISTS', `mcpgw:{${sid}}:session`)).toBe(':1\r\n');
    const ok = await add(sid, 1);
    expect(ok.status).toBe(200);
    expect(ok.json.result.content[0].text).toContain('5');

    await redis.stop();
    const t = Date.now();
    const down = await add(sid, 2);
    const took = Date.now() - t;
    console.log(`Redis down: tools/call answered ${down.status} in ${took} ms`);
    expect(down.status).toBe(503);
    expect(down.json.error.data).toMatchObject({ type: 'SESSION_STORE_UNAVAILABLE', retryable: true });
    expect(down.json.error.code).toBe(-32010);
    expect(took).toBeLessThan(1000);

    const init = await post(gw.url, {
      jsonrpc: '2.0',
      id: 3,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.status).toBe(503);
    expect(init.json.error.data.type).toBe('SESSION_STORE_UNAVAILABLE');

    const notReady = await readyz();
    expect(notReady.status).toBe(503);
    expect(notReady.body.status).toBe('not ready');
    expect(notReady.body.store.state).toBe('unavailable');

    await redis.start(); // same port; started with --save '' so it comes back empty
    const back = await until('/readyz 200 again', async () => (await readyz()).status === 200);
    console.log(`Redis restarted: /readyz 200 again after ${back} ms`);

    // Redis lost the record: the old session is gone (404), a new one works.
    const lost = await add(sid, 4);
    expect(lost.status).toBe(404);
    expect(lost.json.error.data.type).toBe('SESSION_NOT_FOUND');
    const sid2 = await openSession(gw.url);
    const again = await add(sid2, 5);
    expect(again.status).toBe(200);
    expect(again.json.result.content[0].text).toContain('5');
  });

  it('keeps a session across a Redis restart when Redis kept the data (here: restored by hand)', async () => {
    const sid = await openSession(gw.url);
    const key = `mcpgw:{${sid}}:session`;
    const value = (await redis.command('GET', key)).split('\r\n')[1]!;
    await redis.restart();
    await redis.command('SET', key, value, 'PX', '60000');
    await until('/readyz 200 again', async () => (await readyz()).status === 200);
    const res = await add(sid, 6);
    expect(res.status).toBe(200);
    expect(res.json.result.content[0].text).toContain('5');
  });
});
