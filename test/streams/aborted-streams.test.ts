/**
 * Clients that reset their connection right after sending a request, while the gateway awaits
 * the Redis store (the session's create or load): the socket's close has fired before any
 * stream listens for it. Nothing may stay held: no stream slot (limits.maxStreams), no GET
 * holder (which would answer 409 STREAM_CONFLICT), no session kept alive by a stream that does
 * not exist, no POST reply counted for the shutdown drain. A real gateway on a real
 * redis-server, raw sockets over loopback; Redis is paused (SIGSTOP) for the few hundred
 * milliseconds the requests wait in it, so each reset lands during that await. Another client's
 * request comes first after the resets: the store answers in order, so once it is served the
 * gateway has done with the aborted ones, and what they left held can be counted.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleConfig,
  MCP_HEADERS,
  openSession,
  post,
  startGateway,
  type RunningGateway,
} from '../support/gateway.js';
import { metricValue, untilNothingHeld } from '../support/health.js';
import { legacyEcho, openLegacyStream } from '../support/legacy-sse.js';
import { httpRequest, rawSocket } from '../support/raw-socket.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

const N = 12;
const MAX_STREAMS = 10;
const HEADERS = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
const openStreams = (gw: RunningGateway, kind: string) => metricValue(gw, `mcpgw_sse_streams_open{kind="${kind}"}`);

let redis: RedisServer;
let gw: RunningGateway;

/** /status.json's count of open streams: GET holders, listen streams, POST replies being written. */
async function statusStreams(): Promise<{ get: number; listen: number; replies: number }> {
  const body = (await (await fetch(new URL('/status.json', gw.base))).json()) as {
    streams: { get: number; listen: number; replies: number };
  };
  return body.streams;
}

async function connections(): Promise<number> {
  return new Promise((resolve, reject) =>
    gw.gateway.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
  );
}

/**
 * Sends each request on a socket of its own while Redis is paused, waits until the gateway has
 * read them all (and so awaits the store for each), resets every socket, waits until the
 * gateway has seen them close, then lets Redis answer.
 */
async function resetWhileStoreAwaits(requests: string[]): Promise<void> {
  const server = gw.gateway.app.server;
  let read = 0;
  const onRequest = () => void read++;
  server.on('request', onRequest);
  server.on('upgrade', onRequest);
  const before = await connections();
  redis.pause();
  try {
    const sockets = requests.map((r) => rawSocket(gw.base, r));
    await until('the gateway to read every request', () => read === requests.length, 5000, 5);
    await new Promise((r) => setTimeout(r, 50)); // from the request to the store's await: a few ticks
    for (const s of sockets) s.socket.resetAndDestroy();
    await until('the gateway to see every socket close', async () => (await connections()) === before, 5000, 5);
  } finally {
    redis.resume();
    server.off('request', onRequest);
    server.off('upgrade', onRequest);
  }
}

beforeAll(async () => {
  redis = await startRedis();
  gw = await startGateway(
    exampleConfig({
      // No cached records (every load awaits Redis); a PING deadline longer than the pauses here.
      sessions: {
        store: 'redis',
        redisUrl: redis.url,
        keyPrefix: 'aborted:',
        ttlSeconds: 20,
        cacheMs: 0,
        health: { intervalMs: 5000, timeoutMs: 4000 },
      },
      limits: { maxStreams: MAX_STREAMS },
      legacySse: { graceMs: 100 },
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
  await redis?.stop();
});

describe('a client that resets while the store answers', () => {
  it('GET /sse: its session is deleted and its stream slot given back; the next /sse is served', async () => {
    const sessionsBefore = await gw.gateway.store.size();
    await resetWhileStoreAwaits(
      Array.from({ length: N }, () => httpRequest('GET', '/sse', { accept: 'text/event-stream' })),
    );

    const stream = await openLegacyStream(gw.base); // with N slots held (N > limits.maxStreams), a 503 STREAM_LIMIT
    expect(await legacyEcho(stream, 'after the resets')).toBe('after the resets');
    await until('no session left but the new one', async () => (await gw.gateway.store.size()) === sessionsBefore + 1);
    expect(await openStreams(gw, 'legacy-sse')).toBe(1);
    stream.close();
    await until('its session to end', async () => (await gw.gateway.store.size()) === sessionsBefore);
    expect(await openStreams(gw, 'legacy-sse')).toBe(0);
  });

  it('GET /mcp: no stream slot nor GET holder is left; each session opens its stream again', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < N; i++) sessions.push(await openSession(gw.url));
    await resetWhileStoreAwaits(
      sessions.map((sid) => httpRequest('GET', '/mcp', { accept: 'text/event-stream', ...HEADERS(sid) })),
    );
    const other = await openSession(gw.url);
    const controller = new AbortController();
    const res = await fetch(gw.url, {
      headers: { accept: 'text/event-stream', ...HEADERS(other) },
      signal: controller.signal,
    });
    expect(res.status).toBe(200); // with N slots held (N > limits.maxStreams), a 503 STREAM_LIMIT
    expect(await openStreams(gw, 'get')).toBe(1);
    expect((await statusStreams()).get).toBe(1);
    controller.abort();
    await until('no GET stream slot held', async () => (await openStreams(gw, 'get')) === 0);
    expect(await gw.gateway.store.size()).toBe(N + 1); // the sessions themselves are the clients' still

    // Each session's stream opens (not 409 STREAM_CONFLICT), and its calls are answered.
    for (const sid of sessions.slice(0, MAX_STREAMS)) {
      const controller = new AbortController();
      const res = await fetch(gw.url, {
        headers: { accept: 'text/event-stream', ...HEADERS(sid) },
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      const r = await post(
        gw.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: sid } } },
        HEADERS(sid),
      );
      expect(r.json?.result?.content?.[0]?.text).toBe(sid);
      controller.abort();
      await until('the stream to close', async () => (await openStreams(gw, 'get')) === 0);
    }
    for (const sid of [...sessions, other])
      await fetch(gw.url, { method: 'DELETE', headers: { ...MCP_HEADERS, ...HEADERS(sid) } });
  });

  it('POST /mcp: a reply whose client went while the session loaded is not counted as being written', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < N; i++) sessions.push(await openSession(gw.url));
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { text: 'gone' } },
    });
    await resetWhileStoreAwaits(
      sessions.map((sid) => httpRequest('POST', '/mcp', { ...MCP_HEADERS, ...HEADERS(sid) }, call)),
    );
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'here' } } },
      HEADERS(sessions[0]!),
    );
    expect(r.json?.result?.content?.[0]?.text).toBe('here');
    // The shutdown drain waits for replies being written: none is, once the calls are done.
    await untilNothingHeld(gw);
    await until('no reply counted', async () => (await statusStreams()).replies === 0);
    for (const sid of sessions) await fetch(gw.url, { method: 'DELETE', headers: { ...MCP_HEADERS, ...HEADERS(sid) } });
  });

  it('a WebSocket upgrade: the session made for it is deleted; the next upgrade is served', async () => {
    const sessionsBefore = await gw.gateway.store.size();
    const upgrade = httpRequest('GET', '/ws', {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-protocol': 'mcp',
    });
    await resetWhileStoreAwaits(Array.from({ length: N }, () => upgrade));

    const ws = new WebSocket(new URL('/ws', gw.base.replace(/^http/, 'ws')), 'mcp');
    const answers: Array<Record<string, unknown>> = [];
    ws.on('message', (data) => answers.push(JSON.parse(data.toString()) as Record<string, unknown>));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'i',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ws', version: '1' } },
      }),
    );
    await until('initialized', () => answers.some((a) => a.id === 'i'));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 't', method: 'tools/list' }));
    await until('tools listed', () => answers.some((a) => a.id === 't'));
    expect(answers.find((a) => a.id === 't')).toMatchObject({ result: { tools: expect.any(Array) } });
    // Long before the sessions' ttl (20 s) could have ended them.
    await until(
      'no session left but the new one',
      async () => (await gw.gateway.store.size()) === sessionsBefore + 1,
      5000,
    );
    ws.close();
    await until('its session to end', async () => (await gw.gateway.store.size()) === sessionsBefore);
  });
});
