/**
 * Bad input at the Streamable HTTP endpoint: each one gets the HTTP status the transport spec
 * asks for and a JSON-RPC error object from the one error table, and none of them disturbs
 * another live session (a witness session is exercised after every bad input).
 *
 * Real gateway, real HTTP over loopback, real upstream child processes.
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

const BODY_LIMIT = 2048;
const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26'];

let gw: RunningGateway;
/** The session bad input is aimed at. */
let target: string;
/** The session that must not notice any of it. */
let witness: string;
let witnessCalls = 0;

type Reply = Awaited<ReturnType<typeof post>>;

function sessionHeaders(sid: string, version = '2025-06-18'): Record<string, string> {
  return { 'mcp-session-id': sid, 'mcp-protocol-version': version };
}

function echoCall(id: string | number, text: string): object {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo__echo', arguments: { text } } };
}

/** Proves a session still works: a tools/call to echo__echo answers with its own text. */
async function expectSessionWorks(sid: string, label: string): Promise<void> {
  const id = `${label}-${++witnessCalls}`;
  const text = `still alive ${id}`;
  const r = await post(gw.url, echoCall(id, text), sessionHeaders(sid));
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.json).toEqual({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
}

const expectWitnessWorks = () => expectSessionWorks(witness, 'witness');

/** The reply is exactly one JSON-RPC error object from the table, with the given HTTP status. */
function expectError(r: Reply, status: number, code: number, type: string, id: string | number | null = null): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.json).toMatchObject({ jsonrpc: '2.0', id, error: { code, data: { type } } });
  expect(r.json.id).toBe(id);
  expect(typeof r.json.error.message).toBe('string');
  expect(r.json.error.message.length).toBeGreaterThan(0);
  expect(r.json).not.toHaveProperty('result');
}

async function raw(init: RequestInit): Promise<Reply> {
  const res = await fetch(gw.url, init);
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({ limits: { bodyBytes: BODY_LIMIT }, security: { allowedOrigins: ['https://app.example.com'] } }),
  );
  witness = await openSession(gw.url);
  target = await openSession(gw.url);
  await expectWitnessWorks();
});

afterAll(async () => {
  await gw?.stop();
});

describe('malformed bodies', () => {
  it('invalid JSON → 400, -32700 PARSE_ERROR, id null', async () => {
    const r = await post(gw.url, '{"jsonrpc": "2.0", "id": 1, "method": ', sessionHeaders(target));
    expectError(r, 400, -32700, 'PARSE_ERROR', null);
    await expectWitnessWorks();
    await expectSessionWorks(target, 'target');
  });

  it('missing jsonrpc → 400, -32600 INVALID_REQUEST with the id it carried', async () => {
    const r = await post(gw.url, { id: 11, method: 'ping' }, sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', 11);
    await expectWitnessWorks();
  });

  it('wrong jsonrpc version → 400, -32600', async () => {
    const r = await post(gw.url, { jsonrpc: '1.0', id: 'v1', method: 'ping' }, sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', 'v1');
    await expectWitnessWorks();
  });

  it('missing method → 400, -32600', async () => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: 12, params: {} }, sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', 12);
    await expectWitnessWorks();
  });

  it('id: null on a request → 400, -32600, id null', async () => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: null, method: 'ping' }, sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', null);
    await expectWitnessWorks();
  });

  it('non-integer numeric id → 400, -32600, id null', async () => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: 1.5, method: 'ping' }, sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', null);
    await expectWitnessWorks();
  });

  it('params that are not an object → 400, -32600', async () => {
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 13, method: 'tools/call', params: ['echo__echo', 'x'] },
      sessionHeaders(target),
    );
    expectError(r, 400, -32600, 'INVALID_REQUEST', 13);
    const s = await post(
      gw.url,
      { jsonrpc: '2.0', id: 14, method: 'tools/list', params: 'text' },
      sessionHeaders(target),
    );
    expectError(s, 400, -32600, 'INVALID_REQUEST', 14);
    await expectWitnessWorks();
  });

  it('a JSON value that is not a message (a number) → 400, -32600', async () => {
    const r = await post(gw.url, '42', sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', null);
    await expectWitnessWorks();
  });
});

describe('well-formed requests the server cannot satisfy', () => {
  it('unknown method → 200 with -32601 METHOD_NOT_FOUND', async () => {
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 'm1', method: 'no/such/method', params: {} },
      sessionHeaders(target),
    );
    expectError(r, 200, -32601, 'METHOD_NOT_FOUND', 'm1');
    expect(r.json.error.message).toContain('no/such/method');
    await expectWitnessWorks();
  });

  it('unknown tool → 200 with -32602 INVALID_PARAMS', async () => {
    const r = await post(
      gw.url,
      { jsonrpc: '2.0', id: 't1', method: 'tools/call', params: { name: 'nope__nothing', arguments: {} } },
      sessionHeaders(target),
    );
    expectError(r, 200, -32602, 'INVALID_PARAMS', 't1');
    expect(r.json.error.message).toContain('nope__nothing');
    await expectWitnessWorks();
  });

  it('a request with id 0 and one with a string id both get their answers', async () => {
    // A session of its own, initialized with a string id, so that 0 is not reused.
    const init = await post(gw.url, {
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ids', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(init.json).toMatchObject({ jsonrpc: '2.0', id: 'init', result: { protocolVersion: '2025-06-18' } });
    const sid = init.headers.get('mcp-session-id')!;
    expect(sid).toMatch(/^[\x21-\x7e]+$/);

    const zero = await post(gw.url, echoCall(0, 'zero'), sessionHeaders(sid));
    expect(zero.status).toBe(200);
    expect(zero.json).toEqual({ jsonrpc: '2.0', id: 0, result: { content: [{ type: 'text', text: 'zero' }] } });

    const str = await post(
      gw.url,
      { jsonrpc: '2.0', id: 'req-α', method: 'tools/call', params: { name: 'echo__add', arguments: { a: 2, b: 40 } } },
      sessionHeaders(sid),
    );
    expect(str.status).toBe(200);
    expect(str.json).toMatchObject({ jsonrpc: '2.0', id: 'req-α', result: { structuredContent: { sum: 42 } } });

    const ping = await post(gw.url, { jsonrpc: '2.0', id: '', method: 'ping' }, sessionHeaders(sid));
    expect(ping.json).toEqual({ jsonrpc: '2.0', id: '', result: {} });
    await expectWitnessWorks();
  });

  it('a duplicate in-flight request id gets -32600 while the first request still completes', async () => {
    const id = 'dup-1';
    // The first call streams progress, so the test knows it is in flight before sending the second.
    const first = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...sessionHeaders(target) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'slow__sleep', arguments: { ms: 500, steps: 5 }, _meta: { progressToken: 'dup-progress' } },
      }),
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = first.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    while (!buffered.includes('notifications/progress')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before any progress: ${buffered}`);
      buffered += decoder.decode(value, { stream: true });
    }

    const second = await post(
      gw.url,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'second' } } },
      sessionHeaders(target),
    );
    expectError(second, 200, -32600, 'INVALID_REQUEST', id);
    expect(second.json.error.message).toContain(id);

    // The same id in another session is a different request and is not affected.
    const other = await post(gw.url, echoCall(id, 'other session'), sessionHeaders(witness));
    expect(other.json).toEqual({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'other session' }] } });

    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
    }
    const messages = buffered
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)));
    const last = messages.at(-1);
    expect(last).toEqual({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'slept 500ms' }] } });
    expect(messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(5);
    await expectWitnessWorks();
  });
});

describe('headers', () => {
  it('POST whose Accept lacks text/event-stream → 406', async () => {
    const r = await post(gw.url, echoCall('a1', 'x'), { ...sessionHeaders(target), accept: 'application/json' });
    expectError(r, 406, -32000, 'NOT_ACCEPTABLE', null);
    const s = await post(gw.url, echoCall('a2', 'x'), { ...sessionHeaders(target), accept: 'text/event-stream' });
    expectError(s, 406, -32000, 'NOT_ACCEPTABLE', null);
    await expectWitnessWorks();
  });

  it('GET whose Accept lacks text/event-stream → 406', async () => {
    const r = await raw({ method: 'GET', headers: { accept: 'application/json', ...sessionHeaders(target) } });
    expectError(r, 406, -32000, 'NOT_ACCEPTABLE', null);
    await expectWitnessWorks();
  });

  it('wrong Content-Type → 415', async () => {
    const r = await post(gw.url, JSON.stringify(echoCall('c1', 'x')), {
      ...sessionHeaders(target),
      'content-type': 'text/plain',
    });
    expectError(r, 415, -32000, 'UNSUPPORTED_MEDIA_TYPE', null);
    const s = await post(gw.url, JSON.stringify(echoCall('c2', 'x')), {
      ...sessionHeaders(target),
      'content-type': 'application/x-www-form-urlencoded',
    });
    expectError(s, 415, -32000, 'UNSUPPORTED_MEDIA_TYPE', null);
    await expectWitnessWorks();
  });

  it('missing Content-Type → 415', async () => {
    // A byte body makes fetch send no Content-Type at all.
    const r = await raw({
      method: 'POST',
      headers: { accept: MCP_HEADERS.accept, ...sessionHeaders(target) },
      body: new TextEncoder().encode(JSON.stringify(echoCall('c3', 'x'))),
    });
    expectError(r, 415, -32000, 'UNSUPPORTED_MEDIA_TYPE', null);
    await expectWitnessWorks();
  });

  it('Content-Type application/json with a charset is accepted', async () => {
    const r = await post(gw.url, echoCall('c4', 'charset'), {
      ...sessionHeaders(target),
      'content-type': 'application/json; charset=utf-8',
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 'c4', result: { content: [{ type: 'text', text: 'charset' }] } });
  });

  it('missing Mcp-Session-Id → 400', async () => {
    const r = await post(gw.url, echoCall('s1', 'x'), { 'mcp-protocol-version': '2025-06-18' });
    expectError(r, 400, -32000, 'SESSION_ID_REQUIRED', null);
    await expectWitnessWorks();
  });

  it('unknown Mcp-Session-Id → 404, -32001', async () => {
    const r = await post(gw.url, echoCall('s2', 'x'), sessionHeaders('no-such-session-0000'));
    expectError(r, 404, -32001, 'SESSION_NOT_FOUND', null);
    await expectWitnessWorks();
  });

  it('unsupported MCP-Protocol-Version → 400 listing the supported versions', async () => {
    const r = await post(gw.url, echoCall('p1', 'x'), sessionHeaders(target, '1999-01-01'));
    expectError(r, 400, -32000, 'UNSUPPORTED_PROTOCOL_VERSION', null);
    expect(r.json.error.data.supported).toEqual(expect.arrayContaining(SUPPORTED));
    expect(r.json.error.data.supported).not.toContain('1999-01-01');
    expect(r.json.error.message).toContain('1999-01-01');
    await expectWitnessWorks();
  });

  it('no MCP-Protocol-Version header is accepted (assumed 2025-03-26)', async () => {
    const r = await post(gw.url, echoCall('p2', 'no header'), { 'mcp-session-id': target });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 'p2', result: { content: [{ type: 'text', text: 'no header' }] } });
  });
});

describe('batches', () => {
  it('a batch on a 2025-06-18 session → 400, -32600', async () => {
    const r = await post(gw.url, [echoCall('b1', 'x'), echoCall('b2', 'y')], sessionHeaders(target));
    expectError(r, 400, -32600, 'BATCH_NOT_SUPPORTED', null);
    await expectWitnessWorks();
    await expectSessionWorks(target, 'target');
  });

  it('a batch on a 2025-03-26 session answers every request, matched by id', async () => {
    const sid = await openSession(gw.url, '2025-03-26');
    const r = await post(
      gw.url,
      [
        echoCall('b1', 'first'),
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'none', progress: 1 } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo__add', arguments: { a: 1, b: 2 } } },
        { jsonrpc: '2.0', id: 'b3', method: 'no/such/method' },
        { jsonrpc: '2.0', id: 'b4', method: 'ping' },
      ],
      sessionHeaders(sid, '2025-03-26'),
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray(r.json)).toBe(true);
    expect(r.json).toHaveLength(4);
    const byId = new Map<unknown, any>(r.json.map((m: any) => [m.id, m]));
    expect(byId.get('b1')).toEqual({
      jsonrpc: '2.0',
      id: 'b1',
      result: { content: [{ type: 'text', text: 'first' }] },
    });
    expect(byId.get(2)).toMatchObject({ jsonrpc: '2.0', id: 2, result: { structuredContent: { sum: 3 } } });
    expect(byId.get('b3')).toMatchObject({
      jsonrpc: '2.0',
      id: 'b3',
      error: { code: -32601, data: { type: 'METHOD_NOT_FOUND' } },
    });
    expect(byId.get('b4')).toEqual({ jsonrpc: '2.0', id: 'b4', result: {} });
    await expectWitnessWorks();
  });

  it('a batch with an invalid member answers that member with -32600 and the rest normally', async () => {
    const sid = await openSession(gw.url, '2025-03-26');
    const r = await post(
      gw.url,
      [
        { jsonrpc: '2.0', id: 'ok', method: 'ping' },
        { id: 'bad', method: 'ping' },
      ],
      sessionHeaders(sid, '2025-03-26'),
    );
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(2);
    const byId = new Map<unknown, any>(r.json.map((m: any) => [m.id, m]));
    expect(byId.get('ok')).toEqual({ jsonrpc: '2.0', id: 'ok', result: {} });
    expect(byId.get('bad')).toMatchObject({
      jsonrpc: '2.0',
      id: 'bad',
      error: { code: -32600, data: { type: 'INVALID_REQUEST' } },
    });
  });

  it('initialize inside a batch → 400, -32600', async () => {
    const r = await post(gw.url, [
      {
        jsonrpc: '2.0',
        id: 'i1',
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      { jsonrpc: '2.0', id: 'i2', method: 'ping' },
    ]);
    expectError(r, 400, -32600, 'INVALID_REQUEST', null);
    expect(r.headers.get('mcp-session-id')).toBeNull();
    await expectWitnessWorks();
  });

  it('an empty batch → 400, -32600', async () => {
    const r = await post(gw.url, '[]', sessionHeaders(target));
    expectError(r, 400, -32600, 'INVALID_REQUEST', null);
    await expectWitnessWorks();
  });
});

describe('limits, origins, methods, lifecycle', () => {
  it(`a body over limits.bodyBytes (${BODY_LIMIT}) → 413, and the gateway keeps serving`, async () => {
    const body = JSON.stringify(echoCall('big', 'x'.repeat(BODY_LIMIT * 4)));
    expect(Buffer.byteLength(body)).toBeGreaterThan(BODY_LIMIT);
    const r = await post(gw.url, body, sessionHeaders(target));
    expectError(r, 413, -32000, 'PAYLOAD_TOO_LARGE', null);
    await expectWitnessWorks();
    await expectSessionWorks(target, 'target');
    // A body just under the limit still goes through.
    const text = 'y'.repeat(BODY_LIMIT - 300);
    const ok = await post(gw.url, echoCall('fits', text), sessionHeaders(target));
    expect(ok.status).toBe(200);
    expect(ok.json.result.content[0].text).toBe(text);
  });

  it('a chunked body (no Content-Length) over the limit → 413 too', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0","id":"chunked","method":"ping"'));
        if (sent++ < BODY_LIMIT / 256) controller.enqueue(chunk);
        else {
          controller.enqueue(new TextEncoder().encode('}'));
          controller.close();
        }
      },
    });
    const r = await raw({
      method: 'POST',
      headers: { ...MCP_HEADERS, ...sessionHeaders(target) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expectError(r, 413, -32000, 'PAYLOAD_TOO_LARGE', null);
    await expectWitnessWorks();
    await expectSessionWorks(target, 'target');
  });

  it('a disallowed Origin → 403; localhost, a configured origin and no Origin pass', async () => {
    for (const origin of ['https://evil.example.com', 'http://localhost.evil.com', 'null']) {
      const r = await post(gw.url, echoCall(`o-${origin}`, 'x'), { ...sessionHeaders(target), origin });
      expectError(r, 403, -32003, 'ORIGIN_FORBIDDEN', null);
    }
    const get = await raw({
      method: 'GET',
      headers: { accept: 'text/event-stream', origin: 'https://evil.example.com', ...sessionHeaders(target) },
    });
    expectError(get, 403, -32003, 'ORIGIN_FORBIDDEN', null);
    await expectWitnessWorks();

    for (const [i, origin] of ['http://localhost:5173', 'https://app.example.com'].entries()) {
      const r = await post(gw.url, echoCall(`ok-origin-${i}`, origin), { ...sessionHeaders(target), origin });
      expect(r.status, r.text).toBe(200);
      expect(r.json.result.content[0].text).toBe(origin);
    }
    // No Origin at all (a non-browser client) passes: expectSessionWorks sends none.
    await expectSessionWorks(target, 'no-origin');
  });

  it('PUT on the endpoint → 405 with an Allow header', async () => {
    const r = await raw({
      method: 'PUT',
      headers: { ...MCP_HEADERS, ...sessionHeaders(target) },
      body: JSON.stringify(echoCall('put', 'x')),
    });
    expectError(r, 405, -32000, 'METHOD_NOT_ALLOWED', null);
    const allow = (r.headers.get('allow') ?? '').split(',').map((m) => m.trim());
    expect(allow).toEqual(expect.arrayContaining(['GET', 'POST', 'DELETE']));
    expect(allow).not.toContain('PUT');
    await expectWitnessWorks();
  });

  it('DELETE of a session, then reuse → 404', async () => {
    const sid = await openSession(gw.url);
    await expectSessionWorks(sid, 'doomed');
    const del = await fetch(gw.url, { method: 'DELETE', headers: sessionHeaders(sid) });
    expect(del.status).toBe(200);
    await del.text();

    const r = await post(gw.url, echoCall('after-delete', 'x'), sessionHeaders(sid));
    expectError(r, 404, -32001, 'SESSION_NOT_FOUND', null);
    const again = await raw({ method: 'DELETE', headers: sessionHeaders(sid) });
    expectError(again, 404, -32001, 'SESSION_NOT_FOUND', null);
    const get = await raw({ method: 'GET', headers: { accept: 'text/event-stream', ...sessionHeaders(sid) } });
    expectError(get, 404, -32001, 'SESSION_NOT_FOUND', null);
    await expectWitnessWorks();
  });

  it('a POST of notifications only → 202 with an empty body', async () => {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...sessionHeaders(target) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'never-sent', reason: 'test' },
      }),
    });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    await expectWitnessWorks();
    await expectSessionWorks(target, 'target');
  });

  it('a POST of a response only → 202 with an empty body', async () => {
    const r = await post(gw.url, { jsonrpc: '2.0', id: 'server-req-1', result: {} }, sessionHeaders(target));
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
    await expectWitnessWorks();
  });
});
