/**
 * Start-up, as Kubernetes sees it: the port is bound before the upstreams start, so /healthz
 * answers at once while /readyz (and every MCP request, with a retryable 503) waits for them;
 * a fatal configuration error (a catalog collision) ends start-up with its message without
 * waiting for a slow upstream; and /readyz turns 503 while the Redis session store is frozen
 * (SIGSTOP: connections stay open, nothing answers), then 200 again once it answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  isAlive,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { childrenOf, runGatewayToExit, spawnGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

/** A stdio upstream that reads its stdin and never answers: initialize waits for its start timeout. */
const mute = (name: string, extra: Record<string, unknown> = {}) =>
  stdioUpstream(name, ECHO_SERVER, { args: ['-e', 'process.stdin.resume()'], ...extra });

async function readyz(
  base: string | URL,
): Promise<{ status: number; body: { status: string; store?: { state: string; lastError?: string } } }> {
  const res = await fetch(new URL('/readyz', base));
  return {
    status: res.status,
    body: (await res.json()) as { status: string; store?: { state: string; lastError?: string } },
  };
}

async function echoCall(url: URL, text: string): Promise<{ status: number; json: any }> {
  const sid = await openSession(url);
  return post(
    url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
}

describe('an upstream that never answers initialize', () => {
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    await gw?.stop();
  });

  it(
    '/healthz is 200 and /readyz 503 at once, MCP requests get a retryable 503 until start-up ends, then all is served',
    { timeout: 60_000 },
    async () => {
      // timeoutMs 1000: its start gives up after the 10 s floor, and it is not required.
      gw = await spawnGateway(
        { upstreams: [stdioUpstream('echo', ECHO_SERVER), mute('mute', { timeoutMs: 1000 })] },
        { until: 'bound' },
      );
      expect((await fetch(new URL('/healthz', gw.url))).status).toBe(200);
      const r = await readyz(gw.url);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('starting');

      const init = await post(gw.url, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'early', version: '1' } },
      });
      expect(init.status).toBe(503);
      expect(init.headers.get('content-type')).toMatch(/^application\/json/);
      expect(init.headers.get('retry-after')).toBe('1');
      expect(init.json.error).toMatchObject({
        code: -32019,
        data: { type: 'NOT_READY', retryable: true, retryAfterMs: 1000 },
      });

      // Once the mute upstream's start has given up, the rest of the catalog is served.
      await until(
        '/readyz 200 once start-up has ended',
        async () => (await readyz(gw!.url)).status === 200,
        40_000,
        200,
      );
      const call = await echoCall(gw.url, 'after start-up');
      expect(call.status).toBe(200);
      expect(call.json.result.content[0].text).toBe('after start-up');
    },
  );

  it('SIGTERM during start-up stops the gateway and every upstream it started', { timeout: 60_000 }, async () => {
    const starting = await spawnGateway(
      { upstreams: [stdioUpstream('echo', ECHO_SERVER), mute('mute')] },
      { until: 'bound' },
    );
    try {
      await until('both upstream processes to run', () => childrenOf(starting.pid).length >= 2);
      const children = childrenOf(starting.pid);
      starting.child.kill('SIGTERM');
      expect(await starting.exited).toBe(0);
      await until('the upstream processes to be gone', () => children.every((pid) => !isAlive(pid)));
    } finally {
      await starting.stop();
    }
  });
});

describe('a catalog collision', () => {
  it(
    'ends start-up with a non-zero exit and the collision named, without waiting for a mute upstream',
    { timeout: 25_000 },
    async () => {
      // Both expose "echo" unprefixed. The mute one would hold start-up for 30 s: the test's
      // timeout is shorter, so waiting for it fails the test.
      const r = await runGatewayToExit(
        {
          upstreams: [
            stdioUpstream('one', ECHO_SERVER, { prefix: '' }),
            stdioUpstream('two', ECHO_SERVER, { prefix: '' }),
            mute('mute'),
          ],
        },
        24_000,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /failed to start: tools name collision: "\w+" is offered by upstream "one" and by upstream "two"/,
      );
    },
  );
});

describe('a frozen Redis session store', () => {
  let redis: RedisServer;
  let gw: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis();
    gw = await startGateway(
      exampleConfig({
        sessions: { store: 'redis', redisUrl: redis.url, health: { intervalMs: 300, timeoutMs: 200 } },
        upstreams: [stdioUpstream('echo', ECHO_SERVER)],
      }),
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await redis?.stop();
  });

  it('turns /readyz 503 while it does not answer PING, and 200 again once it does', async () => {
    await until('/readyz 200', async () => (await readyz(gw.base)).status === 200);
    redis.pause();
    try {
      await until('/readyz 503 with Redis frozen', async () => (await readyz(gw.base)).status === 503);
      const r = await readyz(gw.base);
      expect(r.body.store).toMatchObject({ state: 'unavailable', lastError: 'NO_PING_REPLY' });
      const metrics = await (await fetch(new URL('/metrics', gw.base))).text();
      expect(metrics).toMatch(/^mcpgw_session_store_up 0$/m);
    } finally {
      redis.resume();
    }
    await until('/readyz 200 with Redis answering again', async () => (await readyz(gw.base)).status === 200);
    const call = await echoCall(gw.url, 'after the freeze');
    expect(call.json.result.content[0].text).toBe('after the freeze');
  });
});
