/**
 * Resumability across replicas: two gateways in this process share one real redis-server (on a
 * free loopback port): sessions, the Redis event store and the Redis bus. A client that loses
 * its stream on one gateway resumes it on the other; a message produced on one gateway reaches
 * the session's GET stream held by the other, once. Real HTTP, real upstream child processes,
 * the official SDK client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, openSession, type RunningGateway } from '../support/gateway.js';
import { flakyFetch, sleepThroughFlakyFetch } from '../support/flaky-fetch.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startReplicas } from '../support/replicas.js';
import { messagesOf, parseSse, SseReader, type SseEvent } from '../support/sse.js';
import { until } from '../support/wait.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const ID = /^([A-Za-z0-9_-]+)\.(\d+-\d+)$/;
const V = '2025-11-25';

let redis: RedisServer;
let a: RunningGateway;
let b: RunningGateway;

async function ready(gw: RunningGateway): Promise<void> {
  await until('/readyz 200', async () => (await fetch(new URL('/readyz', gw.base))).status === 200);
  await until('event store connected', () =>
    gw.gateway.events.append('probe', 'probe', undefined).then(
      () => true,
      () => false,
    ),
  );
}

beforeAll(async () => {
  redis = await startRedis();
  [a, b] = (await startReplicas(2, { sessions: { redisUrl: redis.url }, resumability: { retryMs: 200 } })) as [
    RunningGateway,
    RunningGateway,
  ];
  await Promise.all([ready(a), ready(b)]);
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await redis?.stop();
});

function headers(sid: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': V, ...extra };
}

function getStream(gw: RunningGateway, sid: string, lastEventId?: string): Promise<Response> {
  const extra: Record<string, string> = { accept: 'text/event-stream' };
  if (lastEventId) extra['last-event-id'] = lastEventId;
  return fetch(gw.url, { method: 'GET', headers: headers(sid, extra) });
}

function sleepCall(id: string, ms: number, steps: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'slow__sleep', arguments: { ms, steps }, _meta: { progressToken: `p-${id}` } },
  });
}

function expectOrderedIds(events: SseEvent[], stream: string): void {
  let last: [number, number] = [-1, -1];
  for (const e of events) {
    const m = ID.exec(e.id ?? '');
    expect(m, `event id ${e.id}`).not.toBeNull();
    expect(m![1]).toBe(stream);
    const [x, y] = m![2]!.split('-').map(Number) as [number, number];
    expect(x > last[0] || (x === last[0] && y > last[1])).toBe(true);
    last = [x, y];
  }
}

const note = (n: number | string) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/message',
  params: { level: 'info', data: `m${n}` },
});

describe('resuming a POST reply on another gateway', () => {
  it('raw HTTP: dropped on A after progress 2, resumed on B: progress 3..6 once, in order, then the response', async () => {
    const sid = await openSession(a.url, V);
    const res = await fetch(a.url, { method: 'POST', headers: headers(sid), body: sleepCall('drop', 1200, 6) });
    const reader = new SseReader(res);
    const seen: SseEvent[] = [];
    while (messagesOf(seen).length < 2) seen.push((await reader.next())!);
    await reader.cancel();
    const lastId = seen.at(-1)!.id!;
    await sleep(500); // progress 3 and 4 happen on A while the client is away

    const resumed = await getStream(b, sid, lastId);
    expect(resumed.status).toBe(200);
    const events = await new SseReader(resumed).rest();
    expect(events[0]).toMatchObject({ id: lastId, data: '' });
    expectOrderedIds(events.slice(1), ID.exec(lastId)![1]!);
    const messages = messagesOf(events);
    expect(messages.slice(0, -1).map((m) => m.params.progress)).toEqual([3, 4, 5, 6]);
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'drop',
      result: { content: [{ type: 'text', text: 'slept 1200ms' }] },
    });
  });

  it('the SDK client, its connection cut mid-progress on A, resumes on B by itself: every progress once, in order, then the result', async () => {
    const flaky = flakyFetch({ cutAfterProgress: 2, resumeAt: b.url, resumeDelayMs: 500 });
    const { text, progress } = await sleepThroughFlakyFetch(a.url, flaky, 'resume-across');
    expect(text).toBe('slept 1500ms');
    expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
    expect(flaky.cuts).toBe(1);
    expect(flaky.resumptions.map((r) => r.url)).toEqual([b.url.href]);
    const replayed = messagesOf(parseSse(flaky.resumptions[0]!.body));
    expect(replayed.filter((m) => m.method === 'notifications/progress').length).toBeGreaterThanOrEqual(3);
    expect(replayed.at(-1)).toMatchObject({ result: { content: [{ text: 'slept 1500ms' }] } });
  });
});

describe("the session's GET stream across gateways", () => {
  it("a message produced on A for a session whose GET stream is on B arrives once, in order with B's own", async () => {
    const sid = await openSession(a.url, V);
    const reader = new SseReader(await getStream(b, sid));
    const priming = (await reader.next())!;
    expect(priming.id).toMatch(/^get\./);
    expect(a.gateway.streams.has(sid)).toBe(false);

    const sent: unknown[] = [];
    for (let i = 1; i <= 10; i++) {
      const from = i % 2 === 0 ? b : a;
      expect(from.gateway.streams.sinkFor(sid).send(note(i))).toBe(true);
      sent.push(note(i));
    }
    const got: SseEvent[] = [];
    for (let i = 0; i < 10; i++) got.push((await reader.next())!);
    expectOrderedIds(got, 'get');
    // Each exactly once; A's own messages in the order A sent them, B's likewise.
    const data = got.map((e) => JSON.parse(e.data).params.data as string);
    expect([...data].sort()).toEqual(sent.map((m) => (m as ReturnType<typeof note>).params.data).sort());
    expect(data.filter((d) => Number(d.slice(1)) % 2 === 1)).toEqual(['m1', 'm3', 'm5', 'm7', 'm9']);
    expect(data.filter((d) => Number(d.slice(1)) % 2 === 0)).toEqual(['m2', 'm4', 'm6', 'm8', 'm10']);
    await expect(reader.next(400)).rejects.toThrow(/no SSE event/); // and nothing twice
    await reader.cancel();
  });

  it("resuming the GET stream on A takes it over from B: B's reply ends, messages from B reach A once", async () => {
    const sid = await openSession(a.url, V);
    const onB = new SseReader(await getStream(b, sid));
    await onB.next(); // priming
    b.gateway.streams.sinkFor(sid).send(note('x1'));
    const x1 = (await onB.next())!;
    expect(JSON.parse(x1.data)).toEqual(note('x1'));

    const onA = new SseReader(await getStream(a, sid, x1.id));
    expect(await onA.next()).toMatchObject({ id: x1.id, data: '' });
    expect(await onB.rest(3000)).toEqual([]); // taken over: B ended its reply
    await until('A holds the stream', async () => a.gateway.streams.has(sid) && !b.gateway.streams.has(sid), 3000);

    b.gateway.streams.sinkFor(sid).send(note('x2'));
    const x2 = (await onA.next())!;
    expect(JSON.parse(x2.data)).toEqual(note('x2'));
    expectOrderedIds([x1, x2], 'get');
    await expect(onA.next(400)).rejects.toThrow(/no SSE event/);
    await onA.cancel();
  });

  it('a list change on A while the client is away from its GET stream (held on A) is replayed when it resumes on B', async () => {
    const sid = await openSession(a.url, V);
    const onA = new SseReader(await getStream(a, sid));
    const priming = (await onA.next())!;
    await onA.cancel();
    await until('A let the stream go', async () => !a.gateway.streams.has(sid), 3000);

    // A hears it (B is told over the bus, but held no stream of this session): A records it for the stream it held.
    a.gateway.server.listChanged('echo', 'notifications/tools/list_changed', 'a-session');
    await sleep(100);
    const onB = new SseReader(await getStream(b, sid, priming.id));
    expect(await onB.next()).toMatchObject({ id: priming.id, data: '' });
    expect(JSON.parse((await onB.next())!.data)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    await onB.cancel();
  });
});

describe('Redis failures degrade streams, never hang them', () => {
  it('Redis gone mid-reply: the rest arrives without ids, the failure is counted, and a later resume is refused cleanly', async () => {
    const sid = await openSession(a.url, V);
    const res = await fetch(a.url, { method: 'POST', headers: headers(sid), body: sleepCall('outage', 1000, 5) });
    const reader = new SseReader(res);
    const before: SseEvent[] = [];
    while (messagesOf(before).length < 1) before.push((await reader.next())!);
    await redis.stop();
    try {
      const t = Date.now();
      const after = await reader.rest(10_000);
      expect(Date.now() - t).toBeLessThan(6000);
      const messages = messagesOf([...before, ...after]);
      expect(messages.at(-1)).toMatchObject({ id: 'outage', result: { content: [{ text: 'slept 1000ms' }] } });
      expect(messages.slice(0, -1).map((m) => m.params.progress)).toEqual([1, 2, 3, 4, 5]);
      expect(after.some((e) => e.id === undefined)).toBe(true);
      const failures = (await a.gateway.metrics.streamFailures.get()).values;
      expect(
        failures.find((v) => v.labels.component === 'event_store' && v.labels.operation === 'append')?.value,
      ).toBeGreaterThan(0);
    } finally {
      await redis.start();
    }
    await ready(a);
    // The restarted Redis is empty: the session is gone (404), as with any Redis data loss.
    const resumed = await getStream(a, sid, before.at(-1)!.id);
    expect([400, 404]).toContain(resumed.status);
    await resumed.text();
  });
});
