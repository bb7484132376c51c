/**
 * Resumable SSE streams on one gateway with the in-memory event store: event ids, the
 * 2025-11-25 priming event, and GET with Last-Event-ID replaying exactly what a client missed
 * (a POST reply's events until its response; the session's GET stream, then live). Real gateway,
 * real HTTP, real upstream child processes, and the official SDK client resuming by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { exampleConfig, MCP_HEADERS, openSession, startGateway, type RunningGateway } from '../support/gateway.js';
import { flakyFetch, sleepThroughFlakyFetch } from '../support/flaky-fetch.js';
import { messagesOf, parseSse, SseReader, type SseEvent } from '../support/sse.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const ID = /^([A-Za-z0-9_-]+)\.(\d+-\d+)$/;

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway(exampleConfig({ resumability: { retryMs: 200 } }));
});

afterAll(async () => {
  await gw?.stop();
});

function headers(sid: string, version: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': version, ...extra };
}

function sleepCall(id: string, ms: number, steps: number, progressToken = `p-${id}`): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'slow__sleep', arguments: { ms, steps }, _meta: { progressToken } },
  });
}

async function getStream(sid: string, version: string, lastEventId?: string): Promise<Response> {
  return fetch(gw.url, {
    method: 'GET',
    headers: headers(
      sid,
      version,
      lastEventId ? { accept: 'text/event-stream', 'last-event-id': lastEventId } : { accept: 'text/event-stream' },
    ),
  });
}

/** Checks every event with an id is in one stream with strictly increasing positions. */
function expectOrderedIds(events: SseEvent[], stream?: string): void {
  let last: [number, number] = [-1, -1];
  for (const e of events) {
    const m = ID.exec(e.id ?? '');
    expect(m, `event id ${e.id}`).not.toBeNull();
    if (stream !== undefined) expect(m![1]).toBe(stream);
    const [a, b] = m![2]!.split('-').map(Number) as [number, number];
    expect(a > last[0] || (a === last[0] && b > last[1])).toBe(true);
    last = [a, b];
  }
}

describe('configuration', () => {
  it('resumability has defaults and is validated', () => {
    const upstreams = [{ name: 'e', transport: 'stdio', command: 'node' }];
    expect(resolveConfig({ upstreams }, {}).resumability).toEqual({
      maxEvents: 1000,
      maxAgeSeconds: 300,
      retryMs: 1000,
    });
    expect(() =>
      resolveConfig({ upstreams, resumability: { maxEvents: 0, maxAgeSeconds: 'x', extra: 1 } }, {}),
    ).toThrow(ConfigError);
  });
});

describe('event ids and the priming event', () => {
  it('2025-11-25: an SSE reply starts with a priming event (id, retry, empty data); every event has an id of one stream', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: headers(sid, '2025-11-25'),
      body: sleepCall('a', 150, 3),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await new SseReader(res).rest();
    expect(events[0]).toMatchObject({ data: '', retry: 200 });
    expect(events[0]!.id).toMatch(ID);
    const stream = ID.exec(events[0]!.id!)![1]!;
    expectOrderedIds(events, stream);
    const messages = messagesOf(events);
    expect(messages.map((m) => m.method ?? 'response')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'notifications/progress',
      'response',
    ]);
    expect(events.filter((e) => e.retry !== undefined)).toHaveLength(1);
  });

  it('2025-06-18: no priming event and no retry, but events still carry ids', async () => {
    const sid = await openSession(gw.url, '2025-06-18');
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: headers(sid, '2025-06-18'),
      body: sleepCall('b', 150, 3),
    });
    const events = await new SseReader(res).rest();
    expect(events.every((e) => e.data !== '' && e.retry === undefined)).toBe(true);
    expect(messagesOf(events)).toHaveLength(4);
    expectOrderedIds(events);
  });

  it('GET streams: primed on 2025-11-25 (stream `get`), silent on 2025-06-18', async () => {
    const primed = await openSession(gw.url, '2025-11-25');
    const silent = await openSession(gw.url, '2025-06-18');
    const a = new SseReader(await getStream(primed, '2025-11-25'));
    const first = await a.next();
    expect(first).toMatchObject({ data: '', retry: 200 });
    expect(first!.id).toMatch(/^get\.\d+-\d+$/);
    const b = await getStream(silent, '2025-06-18');
    for (const [sid, version] of [
      [primed, '2025-11-25'],
      [silent, '2025-06-18'],
    ] as const) {
      const del = await fetch(gw.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': sid, 'mcp-protocol-version': version },
      });
      expect(del.status).toBe(200);
    }
    expect(await a.rest()).toEqual([]);
    expect(await b.text()).toBe('');
  });

  it('a JSON reply (no progress) never touches the event store', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const events = gw.gateway.events;
    const append = events.append.bind(events);
    let appends = 0;
    events.append = (...args) => {
      appends++;
      return append(...args);
    };
    try {
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: headers(sid, '2025-11-25'),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo__add', arguments: { a: 1, b: 2 } },
        }),
      });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      await res.text();
      expect(appends).toBe(0);
    } finally {
      events.append = append;
    }
  });
});

describe('resuming a POST reply (GET with Last-Event-ID)', () => {
  it('a client that dropped mid-progress gets every missed event once, in order, then the response, and the reply ends', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: headers(sid, '2025-11-25'),
      body: sleepCall('drop', 1200, 6),
    });
    const reader = new SseReader(res);
    const seen: SseEvent[] = [];
    while (messagesOf(seen).length < 2) seen.push((await reader.next())!);
    await reader.cancel(); // the network goes away after progress 2
    const lastId = seen.at(-1)!.id!;
    await sleep(500); // the call goes on: progress 3 and 4 are recorded while nobody listens

    const resumed = await getStream(sid, '2025-11-25', lastId);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await new SseReader(resumed).rest();
    // Priming with the id it resumes from, then the rest of the same stream.
    expect(events[0]).toMatchObject({ id: lastId, data: '' });
    const stream = ID.exec(lastId)![1]!;
    expectOrderedIds(events.slice(1), stream);
    const messages = messagesOf(events);
    expect(messages.slice(0, -1).map((m) => m.params.progress)).toEqual([3, 4, 5, 6]);
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'drop',
      result: { content: [{ type: 'text', text: 'slept 1200ms' }] },
    });
  });

  it('resuming from the last event of a finished reply: nothing to replay, the reply ends at once', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: headers(sid, '2025-11-25'),
      body: sleepCall('done', 60, 2),
    });
    const events = await new SseReader(res).rest();
    const resumed = await getStream(sid, '2025-11-25', events.at(-1)!.id);
    expect(resumed.status).toBe(200);
    expect(messagesOf(await new SseReader(resumed).rest(3000))).toEqual([]);
  });

  it('an unknown, malformed or foreign Last-Event-ID gets 400 EVENT_ID_UNKNOWN at once (never a hang, never 404)', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const other = await openSession(gw.url, '2025-11-25');
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: headers(other, '2025-11-25'),
      body: sleepCall('x', 60, 2),
    });
    const foreign = (await new SseReader(res).rest())[1]!.id!;
    for (const id of ['garbage', 'abcdefghijkl.1-0', 'get.1-0', foreign, 'x'.repeat(300)]) {
      const t = Date.now();
      const r = await getStream(sid, '2025-11-25', id);
      expect(r.status, id).toBe(400);
      expect(await r.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { type: 'EVENT_ID_UNKNOWN' } },
      });
      expect(Date.now() - t).toBeLessThan(1000);
    }
  });

  it('the SDK client resumes by itself after its stream drops: every progress once, in order, then the result', async () => {
    const flaky = flakyFetch({ cutAfterProgress: 2, resumeDelayMs: 500 });
    const { text, progress } = await sleepThroughFlakyFetch(gw.url, flaky, 'resume-test');
    expect(text).toBe('slept 1500ms');
    expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
    expect(flaky.cuts).toBe(1);
    expect(flaky.resumptions).toHaveLength(1);
    // The resumed reply replayed what was missed (not only live events), and ended with the response.
    const replayed = messagesOf(parseSse(flaky.resumptions[0]!.body));
    expect(replayed.at(-1)).toMatchObject({ result: { content: [{ text: 'slept 1500ms' }] } });
    expect(replayed.filter((m) => m.method === 'notifications/progress').length).toBeGreaterThanOrEqual(3);
  });
});

describe("resuming the session's GET stream", () => {
  it("replays what was sent while the client was away, then stays the session's live GET stream", async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const streams = gw.gateway.streams;
    const note = (n: number) => ({
      jsonrpc: '2.0' as const,
      method: 'notifications/message',
      params: { level: 'info', data: `m${n}` },
    });

    const first = new SseReader(await getStream(sid, '2025-11-25'));
    const priming = (await first.next())!;
    expect(streams.sinkFor(sid).send(note(1))).toBe(true);
    const m1 = (await first.next())!;
    expect(JSON.parse(m1.data)).toEqual(note(1));
    await first.cancel();
    for (let i = 0; i < 100 && streams.has(sid); i++) await sleep(10);
    expect(streams.has(sid)).toBe(false);

    // Nobody holds the stream: still recorded (the client may resume) and reported as handed over.
    expect(streams.sinkFor(sid).send(note(2))).toBe(true);
    expect(streams.sinkFor(sid).send(note(3))).toBe(true);
    await sleep(50);

    const resumed = new SseReader(await getStream(sid, '2025-11-25', m1.id));
    expect(await resumed.next()).toMatchObject({ id: m1.id, data: '' });
    const replayed = [(await resumed.next())!, (await resumed.next())!];
    expect(replayed.map((e) => JSON.parse(e.data))).toEqual([note(2), note(3)]);
    expect(streams.has(sid)).toBe(true);
    streams.sinkFor(sid).send(note(4));
    const live = (await resumed.next())!;
    expect(JSON.parse(live.data)).toEqual(note(4));
    expectOrderedIds([m1, ...replayed, live], 'get');
    expect(priming.id).toMatch(/^get\./);

    const del = await fetch(gw.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(del.status).toBe(200);
    expect(await resumed.rest()).toEqual([]);
  });

  it('a list change while the client is away is replayed when it resumes', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    const first = new SseReader(await getStream(sid, '2025-11-25'));
    const priming = (await first.next())!;
    await first.cancel();
    for (let i = 0; i < 100 && gw.gateway.streams.has(sid); i++) await sleep(10);
    expect(gw.gateway.streams.has(sid)).toBe(false);

    gw.gateway.server.listChanged('echo', 'notifications/tools/list_changed', 'a-session');
    await sleep(50);
    const resumed = new SseReader(await getStream(sid, '2025-11-25', priming.id));
    expect(await resumed.next()).toMatchObject({ id: priming.id, data: '' });
    expect(JSON.parse((await resumed.next())!.data)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    await resumed.cancel();
  });

  it('a session that never opened a GET stream records nothing and is told so', async () => {
    const sid = await openSession(gw.url, '2025-11-25');
    expect(gw.gateway.streams.sinkFor(sid).send({ jsonrpc: '2.0', method: 'notifications/message', params: {} })).toBe(
      false,
    );
  });
});
