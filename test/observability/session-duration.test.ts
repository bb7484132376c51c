/**
 * mcp_server_session_duration_seconds (and the `mcpgw:session:end` event it is made from) times
 * every 2025 session however it ends, once: DELETE, its connection closing (legacy HTTP+SSE,
 * WebSocket), idle expiry, eviction at limits.maxSessions and at limits.maxSessionsPerPrincipal.
 * With Redis and two replicas each end is timed by one replica only: an expiry by the one that
 * opened the session (Redis's keyspace event), an eviction by the one that evicted, a DELETE by
 * the one that served it. Real gateways, stdio upstreams, a real redis-server, loopback HTTP.
 */
import type { RedisSessionStore } from '../../src/session/redis-store.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventChannel } from '../../src/observability/events.js';
import {
  MCP_HEADERS,
  exampleConfig,
  openSession,
  post,
  startGateway,
  type RunningGateway,
} from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { legacyEcho, openLegacyStream } from '../support/legacy-sse.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { until } from '../support/wait.js';

// Node 20 has no global WebSocket (the SDK's WebSocketClientTransport uses it): ws's is the same API.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

const V = '2025-06-18';
const ended: Array<{ cause: string; seconds: number; gateway: string }> = [];
const hear = (m: unknown) => void ended.push(m as (typeof ended)[number]);

beforeAll(() => eventChannel('session:end').subscribe(hear));
afterAll(() => eventChannel('session:end').unsubscribe(hear));
afterEach(() => void (ended.length = 0));

async function timed(gw: RunningGateway): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('mcp_server_session_duration_seconds_count{network_transport="tcp"}'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function echoes(gw: RunningGateway, sid: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'hi' } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': V, ...headers },
  );
  return r.json?.result ? 200 : r.status;
}

async function initialize(gw: RunningGateway, headers: Record<string, string>): Promise<string> {
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: V, capabilities: {}, clientInfo: { name: 'd', version: '1' } },
  };
  const r = await post(gw.url, init, headers);
  expect(r.status, r.text).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

const causes = () => ended.map((e) => e.cause).sort();

describe('a session is timed however it ends (memory store)', () => {
  let gw: RunningGateway;
  afterEach(async () => {
    await gw?.stop();
  });

  it('idle expiry (sessions.ttlSeconds)', async () => {
    gw = await startGateway(exampleConfig({ sessions: { ttlSeconds: 1 } }));
    await openSession(gw.url);
    await until('the idle session to expire and be timed', async () => (await timed(gw)) === 1, 10_000);
    expect(ended).toEqual([expect.objectContaining({ cause: 'expired' })]);
    expect(ended[0]!.seconds).toBeGreaterThanOrEqual(1);
    // Another client is served; the store holds its session only.
    expect(await echoes(gw, await openSession(gw.url))).toBe(200);
    expect(await gw.gateway.store.size()).toBe(1);
  });

  it('eviction at limits.maxSessions and at limits.maxSessionsPerPrincipal', async () => {
    let issuer: JwtIssuer | undefined;
    try {
      issuer = await startJwtIssuer();
      gw = await startGateway(
        exampleConfig({
          auth: issuer.authConfig,
          limits: { maxSessions: 3, maxSessionsPerPrincipal: 1, sessionEvictionIdleSeconds: 0 },
        }),
      );
      const alice = await issuer.bearer('alice');
      await initialize(gw, alice);
      // Alice's second session makes room among hers: her first goes.
      const second = await initialize(gw, alice);
      expect(ended.map((e) => e.cause)).toEqual(['evicted']);
      await initialize(gw, await issuer.bearer('bob'));
      const carol = await issuer.bearer('carol');
      const carols = await initialize(gw, carol);
      // A fourth principal at maxSessions: the least recently used session (alice's second) goes.
      await initialize(gw, await issuer.bearer('dave'));
      expect(ended.map((e) => e.cause)).toEqual(['evicted', 'evicted']);
      expect(await timed(gw)).toBe(2);
      expect(await echoes(gw, second, alice)).toBe(404);
      expect(await echoes(gw, carols, carol)).toBe(200);
      expect(await gw.gateway.store.size()).toBe(3);
    } finally {
      await gw?.stop();
      await issuer?.close();
    }
  });

  it('DELETE, and a legacy HTTP+SSE stream or a WebSocket that closes: each once', async () => {
    gw = await startGateway(exampleConfig());
    const sid = await openSession(gw.url);
    expect(
      (
        await fetch(gw.url, {
          method: 'DELETE',
          headers: { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': V },
        })
      ).status,
    ).toBe(200);
    const legacy = await openLegacyStream(gw.base);
    expect(await legacyEcho(legacy, 'legacy')).toBe('legacy');
    legacy.close();
    const ws = new URL('/ws', gw.base);
    ws.protocol = 'ws:';
    const client = new Client({ name: 'ws', version: '1' });
    await client.connect(new WebSocketClientTransport(ws));
    await client.close();
    await until('three sessions timed', async () => (await timed(gw)) === 3, 10_000);
    expect(causes()).toEqual(['closed', 'closed', 'deleted']);
    await until('the store to hold none of them', async () => (await gw.gateway.store.size()) === 0, 5000);
    expect(await echoes(gw, await openSession(gw.url))).toBe(200);
    expect(await timed(gw)).toBe(3);
  });
});

describe('with Redis and two replicas, each session is timed once', () => {
  let redis: RedisServer;
  let a: RunningGateway;
  let b: RunningGateway;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });
  const replica = (prefix: string, extra: Record<string, unknown>) =>
    startGateway(
      exampleConfig({
        sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: prefix, cacheMs: 0, ...extra },
        limits: { maxSessions: 2, sessionEvictionIdleSeconds: 0 },
      }),
    );

  it('an expiry by the replica that opened the session, though the other used it too', async () => {
    [a, b] = await Promise.all([replica('exp:', { ttlSeconds: 1 }), replica('exp:', { ttlSeconds: 1 })]);
    // Only a keyspace notification says when the key expired (the sweep's backstop cannot): on a loaded
    // machine a replica may still be subscribing when a 1 s session is already gone.
    for (const r of [a, b])
      await until(
        'keyspace notifications',
        () => (r.gateway.store as RedisSessionStore).status().expiryEvents === 'keyspace',
      );
    const sid = await openSession(a.url);
    expect(await echoes(b, sid)).toBe(200);
    await until('the session to expire and be timed', async () => (await timed(a)) === 1, 10_000);
    // Long enough for B's own report of the key's expiry (it tracks the session too).
    await until('B to forget it', async () => (await b.gateway.store.size()) === 0, 10_000);
    expect(await timed(b)).toBe(0);
    expect(causes()).toEqual(['expired']);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('an eviction by the replica that evicted, a DELETE by the replica that served it', async () => {
    [a, b] = await Promise.all([replica('evict:', {}), replica('evict:', {})]);
    const first = await openSession(a.url);
    const second = await openSession(a.url);
    // B's session makes room: A's first goes, timed by B.
    const third = await openSession(b.url);
    expect(causes()).toEqual(['evicted']);
    expect([await timed(a), await timed(b)]).toEqual([0, 1]);
    // A finds its session gone (and forgets it) without timing it again.
    expect(await echoes(a, first)).toBe(404);
    expect(
      (
        await fetch(b.url, {
          method: 'DELETE',
          headers: { ...MCP_HEADERS, 'mcp-session-id': second, 'mcp-protocol-version': V },
        })
      ).status,
    ).toBe(200);
    expect(await echoes(a, second)).toBe(404);
    expect([await timed(a), await timed(b)]).toEqual([0, 2]);
    expect(causes()).toEqual(['deleted', 'evicted']);
    expect(await echoes(a, third)).toBe(200);
  });
});
