/**
 * The Redis connections beside the session store's own (used requestStates here; tasks, tokens
 * and events likewise), each failing on its own: a TCP proxy in front of a real redis-server
 * cuts the gateway's connection named mcp-gateway-spent-states (test/support/redis-proxy.ts).
 * Start-up waits for it (the replica stays "starting", not ready while a 2026-07-28 retry would
 * fail), fails after the Redis start deadline when it never comes, and /readyz is 503 naming it
 * while it is lost after start. Upstream: examples/modern (Streamable HTTP, a real process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from '../support/gateway.js';
import { runGatewayToExit, spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { statelessMeta, statelessRequest } from '../support/stateless.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { until } from '../support/wait.js';

const SPENT = 'mcp-gateway-spent-states';
const TOOL = 'test_input_required_result_request_state';
const ANSWER = { confirm: { action: 'accept', content: { ok: true } } };

let redis: RedisServer;
let proxy: RedisProxy;
let fixture: HttpServerProcess;
let gw: GatewayProcess | undefined;
let nextId = 1;

const config = () => ({
  sessions: { store: 'redis', redisUrl: proxy.url },
  upstreams: [httpUpstream('modern', fixture.url, { prefix: '' })],
});

async function readyz(url: URL): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL('/readyz', url));
  return { status: res.status, body: await res.json() };
}

/** A 2026-07-28 tools/call of TOOL (`extra`: the retry's answers and state); the reply's status and JSON. */
async function call(extra: Record<string, unknown> = {}): Promise<{ status: number; json: any }> {
  const { body, headers } = statelessRequest(nextId++, 'tools/call', {
    name: TOOL,
    arguments: {},
    _meta: statelessMeta({ elicitation: {} }),
    ...extra,
  });
  return post(gw!.url, body, headers);
}

/** A first round, then its retry: the retry spends the state. */
async function roundTrip(): Promise<{ status: number; json: any }> {
  const first = (await call()).json.result;
  expect(first.resultType).toBe('input_required');
  return call({ inputResponses: ANSWER, requestState: first.requestState });
}

beforeAll(async () => {
  redis = await startRedis();
  proxy = await startRedisProxy(redis.port);
  fixture = await startStatelessFixture();
}, 30_000);

afterAll(async () => {
  await gw?.stop();
  await fixture?.stop();
  await proxy?.close();
  await redis?.stop();
});

describe('the used-requestState connection', () => {
  it(
    'start-up waits for it: not ready until it connects, then a retry spends its state',
    { timeout: 40_000 },
    async () => {
      proxy.block(SPENT);
      gw = await spawnGateway(config(), { until: 'bound' });
      await until(
        'the upstream up',
        async () => (await readyz(gw!.url)).body.upstreams?.modern?.state === 'ready',
        20_000,
        100,
      );
      await until('the connection refused at least twice', () => proxy.cut(SPENT) >= 2, 10_000, 50);
      const starting = await readyz(gw.url);
      expect(starting).toMatchObject({ status: 503, body: { status: 'starting' } });

      proxy.unblock(SPENT);
      await until('/readyz 200', async () => (await readyz(gw!.url)).status === 200, 10_000, 50);
      const done = await roundTrip();
      expect(done.json.result.resultType).toBe('complete');
    },
  );

  it(
    'lost after start: /readyz 503 naming it, a retry refused typed and retryable; back: all served',
    { timeout: 30_000 },
    async () => {
      proxy.block(SPENT);
      await until('/readyz 503', async () => (await readyz(gw!.url)).status === 503, 5000, 50);
      expect((await readyz(gw!.url)).body).toMatchObject({
        status: 'not ready',
        store: { state: 'unavailable', notReady: ['spent-states'] },
      });
      const refused = await roundTrip();
      expect(refused.json.error).toMatchObject({
        code: -32010,
        data: { type: 'SESSION_STORE_UNAVAILABLE', retryable: true },
      });

      proxy.unblock(SPENT);
      await until('/readyz 200 again', async () => (await readyz(gw!.url)).status === 200, 10_000, 50);
      expect((await readyz(gw!.url)).body.store.notReady).toBeUndefined();
      expect((await roundTrip()).json.result.resultType).toBe('complete');
    },
  );

  it('never there: start-up fails after the Redis start deadline, saying so', { timeout: 45_000 }, async () => {
    await gw?.stop();
    gw = undefined;
    proxy.block(SPENT);
    try {
      const r = await runGatewayToExit(config(), 40_000);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/failed to start: Redis was not reachable within 15 s of start/);
    } finally {
      proxy.unblock(SPENT);
    }
  });
});
