/**
 * Bounds on what anonymous or single clients can accumulate: sessions (limits.maxSessions, per
 * replica in memory and across replicas in Redis), sessions per principal
 * (limits.maxSessionsPerPrincipal, with auth on) and long-lived streams (limits.maxStreams).
 * Past a bound the least recently used session idle for limits.sessionEvictionIdleSeconds makes
 * room; when none is, the new one gets a retryable JSON-RPC error with Retry-After, and every
 * session already open keeps working. Real gateways, a real Redis, real HTTP over loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MCP_HEADERS,
  exampleConfig,
  openSession,
  post,
  startGateway,
  type RunningGateway,
} from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const headersOf = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });

function initialize(gw: RunningGateway, headers: Record<string, string> = {}) {
  return post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '1' } },
    },
    headers,
  );
}

async function echoes(gw: RunningGateway, sid: string, headers: Record<string, string> = {}): Promise<number> {
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'hi' } } },
    { ...headersOf(sid), ...headers },
  );
  return r.status === 200 && r.json?.result ? 200 : r.status;
}

function expectRefusal(r: Awaited<ReturnType<typeof post>>, status: number, code: number, type: string): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.json).toMatchObject({ jsonrpc: '2.0', id: 0, error: { code, data: { type, retryable: true } } });
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(r.headers.get('mcp-session-id')).toBeNull();
}

describe('limits.maxSessions, memory store', () => {
  let gw: RunningGateway;
  afterAll(() => gw?.stop());

  it('clients that never DELETE do not accumulate past the cap: the least recently used idle session makes room', async () => {
    gw = await startGateway(exampleConfig({ limits: { maxSessions: 5, sessionEvictionIdleSeconds: 0 } }));
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await openSession(gw.url));
    // The first one is used again, so the second is now the least recently used.
    expect(await echoes(gw, first[0]!)).toBe(200);
    await openSession(gw.url);
    expect(await echoes(gw, first[1]!)).toBe(404);
    expect(await echoes(gw, first[0]!)).toBe(200);
    for (let i = 0; i < 50; i++) await openSession(gw.url);
    expect(await gw.gateway.store.size()).toBe(5);
    await gw.stop();
  });

  it('when no session has been idle long enough, initialize gets 503 SESSION_LIMIT with Retry-After, and open sessions keep working', async () => {
    gw = await startGateway(exampleConfig({ limits: { maxSessions: 3, sessionEvictionIdleSeconds: 3600 } }));
    const open = [await openSession(gw.url), await openSession(gw.url), await openSession(gw.url)];
    expectRefusal(await initialize(gw), 503, -32016, 'SESSION_LIMIT');
    for (const sid of open) expect(await echoes(gw, sid)).toBe(200);
    // A DELETE makes room at once.
    await fetch(gw.url, { method: 'DELETE', headers: { ...MCP_HEADERS, ...headersOf(open[0]!) } });
    expect((await initialize(gw)).status).toBe(200);
  });
});

describe('limits.maxSessions in Redis: one bound across replicas', () => {
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

  const replica = (evictIdle: number, prefix: string) =>
    startGateway(
      exampleConfig({
        sessions: { store: 'redis', redisUrl: redis.url, keyPrefix: prefix },
        limits: { maxSessions: 4, sessionEvictionIdleSeconds: evictIdle },
      }),
    );

  it('two replicas share the cap: the fifth session is refused on either', async () => {
    [a, b] = await Promise.all([replica(3600, 'cap1:'), replica(3600, 'cap1:')]);
    const open = [
      await openSession(a.url),
      await openSession(b.url),
      await openSession(a.url),
      await openSession(b.url),
    ];
    expectRefusal(await initialize(a), 503, -32016, 'SESSION_LIMIT');
    expectRefusal(await initialize(b), 503, -32016, 'SESSION_LIMIT');
    for (const [i, sid] of open.entries()) expect(await echoes(i % 2 ? a : b, sid)).toBe(200);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('with eviction allowed, the oldest idle session goes, for every replica', async () => {
    [a, b] = await Promise.all([replica(0, 'cap2:'), replica(0, 'cap2:')]);
    const open = [
      await openSession(a.url),
      await openSession(b.url),
      await openSession(a.url),
      await openSession(b.url),
    ];
    expect(await echoes(b, open[0]!)).toBe(200); // open[1] is now the least recently used
    const fifth = await openSession(a.url);
    expect(await echoes(a, open[1]!)).toBe(404);
    expect(await echoes(b, open[1]!)).toBe(404);
    for (const sid of [open[0]!, open[2]!, open[3]!, fifth]) expect(await echoes(b, sid)).toBe(200);
    expect(await redis.command('ZCARD', 'cap2:{sessions}:index')).toContain(':4');
  });

  it('a request naming an unknown session adds nothing to the index', async () => {
    for (let i = 0; i < 20; i++) expect(await echoes(a, `forged-${i}`)).toBe(404);
    expect(await redis.command('ZCARD', 'cap2:{sessions}:index')).toContain(':4');
  });
});

describe('limits.maxSessionsPerPrincipal', () => {
  let issuer: JwtIssuer;
  let gw: RunningGateway;
  beforeAll(async () => {
    issuer = await startJwtIssuer();
    gw = await startGateway(
      exampleConfig({
        auth: issuer.authConfig,
        limits: { maxSessionsPerPrincipal: 2, sessionEvictionIdleSeconds: 3600 },
      }),
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await issuer?.close();
  });

  it('one principal past its bound gets 429 PRINCIPAL_SESSION_LIMIT; another principal is not affected', async () => {
    const alice = await issuer.bearer('alice');
    const sessions = [];
    for (let i = 0; i < 2; i++) {
      const r = await initialize(gw, alice);
      expect(r.status).toBe(200);
      sessions.push(r.headers.get('mcp-session-id')!);
    }
    expectRefusal(await initialize(gw, alice), 429, -32017, 'PRINCIPAL_SESSION_LIMIT');
    const bob = await initialize(gw, await issuer.bearer('bob'));
    expect(bob.status).toBe(200);
    for (const sid of sessions) expect(await echoes(gw, sid, alice)).toBe(200);
  });
});

describe('limits.maxStreams', () => {
  let gw: RunningGateway;
  afterAll(() => gw?.stop());

  it('past the bound a GET stream gets 503 STREAM_LIMIT; closing one makes room', async () => {
    gw = await startGateway(exampleConfig({ limits: { maxStreams: 2 } }));
    const sessions = [await openSession(gw.url), await openSession(gw.url), await openSession(gw.url)];
    const get = (sid: string, signal?: AbortSignal) =>
      fetch(gw.url, { headers: { accept: 'text/event-stream', ...headersOf(sid) }, signal });
    const aborts = [new AbortController(), new AbortController()];
    const open = [await get(sessions[0]!, aborts[0]!.signal), await get(sessions[1]!, aborts[1]!.signal)];
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    const refused = await get(sessions[2]!);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({
      error: { code: -32018, data: { type: 'STREAM_LIMIT', retryable: true } },
    });
    expect(await echoes(gw, sessions[2]!)).toBe(200);
    aborts[0]!.abort();
    let third: Response | undefined;
    for (let i = 0; i < 100 && third?.status !== 200; i++) {
      await third?.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
      third = await get(sessions[2]!, aborts[1]!.signal);
    }
    expect(third?.status).toBe(200);
    aborts[1]!.abort();
  });
});
