/**
 * SSE on the Streamable HTTP endpoint: a request that asks for progress is answered with an
 * event stream (related notifications first, the response last); one that does not is answered
 * with plain JSON; the session's GET stream opens once, a second one is refused, and deleting
 * the session ends it.
 *
 * Real gateway, real HTTP over loopback, real upstream child processes.
 */
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, openSession, post, startGateway, type RunningGateway } from '../support/gateway.js';
import { parseSse } from '../support/sse.js';

let gw: RunningGateway;
let sid: string;

function headers(session: string): Record<string, string> {
  return { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
}

function sleepCall(id: string | number, args: Record<string, unknown>, progressToken?: string | number): object {
  const params: Record<string, unknown> = { name: 'slow__sleep', arguments: args };
  if (progressToken !== undefined) params._meta = { progressToken };
  return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

beforeAll(async () => {
  gw = await startGateway();
  sid = await openSession(gw.url);
});

afterAll(async () => {
  await gw?.stop();
});

describe('POST reply: SSE when there is progress, JSON otherwise', () => {
  for (const token of ['client-token-1', 4242] as const) {
    it(`tools/call with progressToken ${JSON.stringify(token)} → text/event-stream: progress first, response last`, async () => {
      const id = `sse-${String(token)}`;
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: headers(sid),
        body: JSON.stringify(sleepCall(id, { ms: 300, steps: 3 }, token)),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('cache-control')).toContain('no-cache');
      const body = await res.text();
      const events = parseSse(body);
      const messages = events.map((e) => JSON.parse(e.data));
      expect(events.every((e) => e.event === undefined || e.event === 'message')).toBe(true);

      expect(messages).toHaveLength(4);
      const progress = messages.slice(0, -1);
      for (const [i, n] of progress.entries()) {
        expect(n).toMatchObject({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress: i + 1, total: 3 },
        });
        expect(n).not.toHaveProperty('id');
      }
      const values = progress.map((n) => n.params.progress as number);
      for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1]!);

      expect(messages.at(-1)).toEqual({
        jsonrpc: '2.0',
        id,
        result: { content: [{ type: 'text', text: 'slept 300ms' }] },
      });
    });
  }

  it('two concurrent progress calls in one session each get only their own token', async () => {
    const calls = ['mine-a', 'mine-b'].map(async (token, i) => {
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: headers(sid),
        body: JSON.stringify(sleepCall(`c${i}`, { ms: 200, steps: 2 }, token)),
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      return { token, id: `c${i}`, messages: parseSse(await res.text()).map((e) => JSON.parse(e.data)) };
    });
    for (const { token, id, messages } of await Promise.all(calls)) {
      expect(messages).toHaveLength(3);
      expect(messages.slice(0, 2).map((m) => m.params.progressToken)).toEqual([token, token]);
      expect(messages.at(-1)).toMatchObject({ id, result: { content: [{ text: 'slept 200ms' }] } });
    }
  });

  it('tools/call without progressToken → application/json with just the response', async () => {
    const r = await post(gw.url, sleepCall('plain', { ms: 100, steps: 2 }), {
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-06-18',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: 'plain',
      result: { content: [{ type: 'text', text: 'slept 100ms' }] },
    });
  });
});

describe('GET stream', () => {
  it('opens once per session (a second concurrent GET is 409) and ends when the session is deleted', async () => {
    const session = await openSession(gw.url);
    const getHeaders = { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const controller = new AbortController();
    try {
      const stream = await fetch(gw.url, { method: 'GET', headers: getHeaders, signal: controller.signal });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);

      const second = await fetch(gw.url, { method: 'GET', headers: getHeaders });
      expect(second.status).toBe(409);
      const conflict = await second.json();
      expect(conflict).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { type: 'STREAM_CONFLICT' } },
      });

      // Another session may have its own stream at the same time.
      const other = await openSession(gw.url);
      const otherStream = await fetch(gw.url, { method: 'GET', headers: { ...getHeaders, 'mcp-session-id': other } });
      expect(otherStream.status).toBe(200);
      expect(otherStream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const otherDel = await fetch(gw.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': other, 'mcp-protocol-version': '2025-06-18' },
      });
      expect(otherDel.status).toBe(200);
      await otherDel.text();
      expect(await otherStream.text()).toBe('');

      // The session still answers POSTs while its GET stream is open.
      const ping = await post(
        gw.url,
        { jsonrpc: '2.0', id: 'p', method: 'ping' },
        { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(ping.json).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });

      const del = await fetch(gw.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      });
      expect(del.status).toBe(200);
      await del.text();

      // The body finishes (no error, no abort needed): reading it to the end resolves.
      const rest = await stream.text();
      expect(parseSse(rest)).toEqual([]);
      expect(controller.signal.aborted).toBe(false);

      const after = await fetch(gw.url, { method: 'GET', headers: getHeaders });
      expect(after.status).toBe(404);
      expect(await after.json()).toMatchObject({ error: { code: -32001, data: { type: 'SESSION_NOT_FOUND' } } });
    } finally {
      controller.abort();
    }
  });

  it('a GET stream closed by the client frees the slot for a new GET', async () => {
    const session = await openSession(gw.url);
    const getHeaders = { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    // node:http on a connection of its own, so that closing it closes exactly that socket.
    const req = request(gw.url, { method: 'GET', headers: getHeaders, agent: false });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
      req.end();
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const closed = new Promise((resolve) => req.socket?.once('close', resolve));
    req.destroy();
    await closed;

    const blocked = await fetch(gw.url, { method: 'GET', headers: { ...getHeaders, accept: 'application/json' } });
    expect(blocked.status).toBe(406); // (a control: the session is still there)
    await blocked.text();

    // The server notices the closed socket asynchronously: poll until the slot is free.
    let status = 409;
    let stream: Response | undefined;
    const next = new AbortController();
    try {
      for (let attempt = 0; attempt < 200 && status === 409; attempt++) {
        stream = await fetch(gw.url, { method: 'GET', headers: getHeaders, signal: next.signal });
        status = stream.status;
        if (status === 409) {
          await stream.text();
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      expect(status).toBe(200);
      expect(stream!.headers.get('content-type')).toMatch(/^text\/event-stream/);
      // End it from the server side (DELETE), so no half-open client socket outlives the test.
      const del = await fetch(gw.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      });
      expect(del.status).toBe(200);
      await del.text();
      expect(await stream!.text()).toBe('');
    } finally {
      next.abort();
    }
  });
});
