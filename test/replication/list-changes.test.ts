/**
 * A per-session worker's list change, seen from every replica: two replicas on one real
 * redis-server, a session whose worker runs on replica A, its lists also read (and kept) on B.
 * The worker adds a tool and says `notifications/tools/list_changed`: the session's lists on B
 * show the new tool at once (they were kept 10 s there before), and the GET streams held on B,
 * the session's own and another session's, hear list_changed as they would on A. Then a
 * WebSocket session on A beside Streamable HTTP sessions on B: calls on both go on side by side,
 * and a list change of either side's worker reaches both. Upstreams: test/support/growing-server.ts
 * and the slow example.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internals } from '../../src/gateway/internals.js';
import { SLOW_SERVER, openSession, post, stdioUpstream, type RunningGateway } from '../support/gateway.js';
import { growingUpstream } from '../support/growing-server.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { SseReader, nextNotification } from '../support/sse.js';
import { until } from '../support/wait.js';
import { RawClient } from '../support/ws-client.js';

const UPSTREAM = growingUpstream('ups');
const VERSION = '2025-06-18';
/** A list_changed on the streams follows the shared catalog's refresh: at most once every 5 s per upstream. */
const SPACED_WAIT_MS = 10_000;

let redis: RedisServer;
let replicas: RunningGateway[] = [];
const streams: SseReader[] = [];
let nextId = 1;

async function rpc(
  gw: RunningGateway,
  sid: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<any> {
  const res = await post(
    gw.url,
    { jsonrpc: '2.0', id: nextId++, method, params },
    { 'mcp-session-id': sid, 'mcp-protocol-version': VERSION },
  );
  if (!res.json) throw new Error(`${method}: ${res.status} ${res.text}`);
  return res.json;
}

/** The growing upstream's tools in a tools/list result. */
const growing = (result: any): string[] =>
  (result.tools as Array<{ name: string }>)
    .map((t) => t.name)
    .filter((n) => n.startsWith('ups__'))
    .sort();
const toolNames = async (gw: RunningGateway, sid: string): Promise<string[]> =>
  growing((await rpc(gw, sid, 'tools/list')).result);

async function getStream(gw: RunningGateway, sid: string): Promise<SseReader> {
  const res = await fetch(gw.url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': VERSION },
  });
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  streams.push(reader);
  return reader;
}

beforeAll(async () => {
  redis = await startRedis();
  replicas = await startReplicas(2, {
    sessions: { redisUrl: redis.url },
    upstreams: [UPSTREAM, stdioUpstream('slow', SLOW_SERVER)],
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(streams.map((s) => s.cancel()));
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe("a per-session worker's list change on two replicas", () => {
  it("reaches the session's kept lists and the GET streams on the other replica at once", async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const sid = await openSession(a.url);
    // Its worker starts on A; B keeps the session's lists (asked of A's worker) for 10 s.
    expect(await toolNames(a, sid)).toEqual(['ups__base', 'ups__grow']);
    expect(await toolNames(b, sid)).toEqual(['ups__base', 'ups__grow']);
    const own = await getStream(b, sid);
    const otherSid = await openSession(b.url);
    const other = await getStream(b, otherSid);

    expect((await rpc(a, sid, 'tools/call', { name: 'ups__grow', arguments: {} })).result.content[0].text).toBe(
      'grow ran',
    );
    // Well inside the 10 s B kept the lists for: a change B heard of only when they expire fails here.
    const waited = await until(
      'the new tool listed on B',
      async () => (await toolNames(b, sid)).includes('ups__extra'),
      3000,
      50,
    );
    expect(await toolNames(b, sid)).toEqual(['ups__base', 'ups__extra', 'ups__grow']);
    expect(await toolNames(a, sid)).toEqual(['ups__base', 'ups__extra', 'ups__grow']);
    // (The streams hear it after the shared catalog's refresh: at once here, spaced 5 s apart per upstream.)
    await nextNotification(own, 'notifications/tools/list_changed', SPACED_WAIT_MS);
    await nextNotification(other, 'notifications/tools/list_changed', SPACED_WAIT_MS);
    console.log(`list change seen on the other replica after ${waited} ms`);

    // Nothing else disturbed: another session's call on B runs, and its own lists are its worker's.
    expect((await rpc(b, otherSid, 'tools/call', { name: 'ups__base', arguments: {} })).result.content[0].text).toBe(
      'base ran',
    );
    expect(await toolNames(b, otherSid)).toEqual(['ups__base', 'ups__grow']);
    for (const r of replicas) expect((await fetch(new URL('/readyz', r.base))).status).toBe(200);
  });
});

describe('a WebSocket session on A beside Streamable HTTP sessions on B', () => {
  const LIST_CHANGED = 'notifications/tools/list_changed';

  it("serves both side by side; a list change of either side's worker reaches both", { timeout: 40_000 }, async () => {
    const [a, b] = replicas as [RunningGateway, RunningGateway];
    const ws = await RawClient.open(a.base);
    await ws.initialize();
    ws.send({ jsonrpc: '2.0', id: 'list-1', method: 'tools/list' });
    expect(growing((await ws.answerTo('list-1')).result)).toEqual(['ups__base', 'ups__grow']);
    const sid = await openSession(b.url);
    const stream = await getStream(b, sid);

    // A call in flight on the socket while B serves the other session.
    ws.send({
      jsonrpc: '2.0',
      id: 'slow',
      method: 'tools/call',
      params: { name: 'slow__sleep', arguments: { ms: 800, steps: 0 } },
    });
    expect((await rpc(b, sid, 'tools/call', { name: 'ups__base', arguments: {} })).result.content[0].text).toBe(
      'base ran',
    );
    expect(await toolNames(b, sid)).toEqual(['ups__base', 'ups__grow']);
    expect((await ws.answerTo('slow', 10_000)).result).toMatchObject({ content: [{ text: 'slept 800ms' }] });

    // The HTTP session's worker (on B) changes its list: the socket on A hears of it.
    expect((await rpc(b, sid, 'tools/call', { name: 'ups__grow', arguments: {} })).result.content[0].text).toBe(
      'grow ran',
    );
    await nextNotification(stream, LIST_CHANGED, SPACED_WAIT_MS);
    await until('list_changed on the socket', () => ws.count(LIST_CHANGED) >= 1, SPACED_WAIT_MS);
    expect(await toolNames(b, sid)).toEqual(['ups__base', 'ups__extra', 'ups__grow']);
    ws.send({ jsonrpc: '2.0', id: 'list-2', method: 'tools/list' });
    expect(growing((await ws.answerTo('list-2')).result)).toEqual(['ups__base', 'ups__grow']); // its own worker's lists

    // The socket's own worker (on A) changes its list: the socket and the stream on B hear of it.
    const heard = ws.count(LIST_CHANGED);
    ws.send({ jsonrpc: '2.0', id: 'grow', method: 'tools/call', params: { name: 'ups__grow', arguments: {} } });
    expect((await ws.answerTo('grow')).result).toMatchObject({ content: [{ text: 'grow ran' }] });
    await until('list_changed on the socket again', () => ws.count(LIST_CHANGED) > heard, SPACED_WAIT_MS);
    ws.send({ jsonrpc: '2.0', id: 'list-3', method: 'tools/list' });
    expect(growing((await ws.answerTo('list-3')).result)).toEqual(['ups__base', 'ups__extra', 'ups__grow']);
    await nextNotification(stream, LIST_CHANGED, SPACED_WAIT_MS);

    expect(ws.closed).toBeUndefined();
    ws.ws.close();
    expect(await ws.closeCode()).toBe(1005);
    for (const r of replicas) {
      await until('nothing in flight', () => internals(r.gateway.server).inFlight === 0, 3000);
      expect((await fetch(new URL('/readyz', r.base))).status).toBe(200);
    }
  });
});
