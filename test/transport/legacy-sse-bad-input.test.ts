/**
 * The legacy HTTP+SSE endpoints refuse what they must, in JSON-RPC terms with the status of the
 * error table, and disturb no other session: POSTs for unknown, ended or another principal's
 * sessions (404, like a Streamable HTTP session one may not learn exists), without sessionId,
 * not JSON, too large; a Streamable HTTP session's id; a bad Origin; no token with auth on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HEADERS, exampleConfig, openSession, startGateway, type RunningGateway } from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { SseReader, type SseEvent } from '../support/sse.js';
import { until } from '../support/wait.js';

let gw: RunningGateway;
let authGw: RunningGateway;
let offGw: RunningGateway;
let issuer: JwtIssuer;

interface OpenStream {
  reader: SseReader;
  endpoint: URL;
  sessionId: string;
  close(): Promise<void>;
}

async function openStream(base: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(new URL('/sse', base), {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const reader = new SseReader(res);
  const first = (await reader.next()) as SseEvent;
  expect(first.event).toBe('endpoint');
  const endpoint = new URL(first.data, base);
  return {
    reader,
    endpoint,
    sessionId: endpoint.searchParams.get('sessionId')!,
    close: async () => controller.abort(),
  };
}

function postTo(url: URL | string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function nextMessage(reader: SseReader): Promise<Record<string, unknown>> {
  for (;;) {
    const ev = await reader.next();
    if (!ev) throw new Error('stream ended');
    if (ev.event === 'message') return JSON.parse(ev.data) as Record<string, unknown>;
  }
}

beforeAll(async () => {
  issuer = await startJwtIssuer();
  gw = await startGateway(exampleConfig({ legacySse: { graceMs: 100 }, limits: { bodyBytes: 4096 } }));
  authGw = await startGateway(exampleConfig({ auth: issuer.authConfig }));
  offGw = await startGateway(exampleConfig({ legacySse: false, websocket: false }));
});

afterAll(async () => {
  await Promise.all([gw?.stop(), authGw?.stop(), offGw?.stop()]);
  await issuer?.close();
});

describe('legacy HTTP+SSE: bad input', () => {
  it('serves a raw client: the endpoint event, 202 for each POST, replies on the stream', async () => {
    const s = await openStream(gw.base);
    expect(s.endpoint.pathname).toBe('/messages');
    const res = await postTo(s.endpoint, INIT);
    expect(res.status).toBe(202);
    expect(await nextMessage(s.reader)).toMatchObject({
      id: 1,
      result: { protocolVersion: '2024-11-05', serverInfo: { name: 'mcp-gateway' } },
    });
    expect(
      (await postTo(s.endpoint, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status,
    ).toBe(202);
    expect((await postTo(s.endpoint, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }))).status).toBe(202);
    expect(await nextMessage(s.reader)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    await s.close();
  });

  it('refuses requests before initialize on the stream, not the POST', async () => {
    const s = await openStream(gw.base);
    expect(
      (await postTo(s.endpoint, JSON.stringify({ jsonrpc: '2.0', id: 'early', method: 'tools/list' }))).status,
    ).toBe(202);
    expect(await nextMessage(s.reader)).toMatchObject({ id: 'early', error: { code: -32600 } });
    await s.close();
  });

  it('answers a POST for an unknown session 404 SESSION_NOT_FOUND, and one without sessionId 400', async () => {
    const unknown = await postTo(new URL('/messages?sessionId=no-such-session', gw.base), INIT);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, data: { type: 'SESSION_NOT_FOUND' } },
    });
    const missing = await postTo(new URL('/messages', gw.base), INIT);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { code: -32000, data: { type: 'SESSION_ID_REQUIRED' } } });
  });

  it('does not take a Streamable HTTP session id on /messages (404)', async () => {
    const sid = await openSession(gw.url);
    const res = await postTo(
      new URL(`/messages?sessionId=${sid}`, gw.base),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    );
    expect(res.status).toBe(404);
    // Nor a legacy session id on /mcp.
    const s = await openStream(gw.base);
    const viaMcp = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': s.sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(viaMcp.status).toBe(404);
    await s.close();
  });

  it('answers a body that is not JSON 400 PARSE_ERROR and one over limits.bodyBytes 413; the stream goes on', async () => {
    const s = await openStream(gw.base);
    const bad = await postTo(s.endpoint, '{"jsonrpc":');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700, data: { type: 'PARSE_ERROR' } } });
    const big = await postTo(
      s.endpoint,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5000) } }),
    );
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: { data: { type: 'PAYLOAD_TOO_LARGE' } } });
    const wrongType = await postTo(s.endpoint, INIT, { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expect((await postTo(s.endpoint, INIT)).status).toBe(202);
    expect(await nextMessage(s.reader)).toMatchObject({ id: 1, result: {} });
    await s.close();
  });

  it('ends the session a grace period after its stream closes: later POSTs get 404', async () => {
    const s = await openStream(gw.base);
    await s.close();
    await until(
      'session ended',
      async () =>
        (await postTo(s.endpoint, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status ===
        404,
      5000,
      50,
    );
    expect(await gw.gateway.store.get(s.sessionId)).toBeUndefined();
  });

  it('refuses a bad Origin (403) on the stream and on POSTs', async () => {
    const res = await fetch(new URL('/sse', gw.base), {
      headers: { accept: 'text/event-stream', origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: -32003, data: { type: 'ORIGIN_FORBIDDEN' } } });
    const s = await openStream(gw.base);
    const post = await postTo(s.endpoint, INIT, { origin: 'https://evil.example' });
    expect(post.status).toBe(403);
    await s.close();
  });

  it('with auth on: 401 without a token; another principal’s session is 404, the owner’s 202', async () => {
    const none = await fetch(new URL('/sse', authGw.base), { headers: { accept: 'text/event-stream' } });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);
    await none.body?.cancel();
    const alice = await issuer.bearer('alice');
    const s = await openStream(authGw.base, alice);
    const mallory = await postTo(s.endpoint, INIT, await issuer.bearer('mallory'));
    expect(mallory.status).toBe(404);
    expect(await mallory.json()).toMatchObject({ error: { code: -32001 } });
    const anonymous = await postTo(s.endpoint, INIT);
    expect(anonymous.status).toBe(401);
    expect((await postTo(s.endpoint, INIT, alice)).status).toBe(202);
    expect(await nextMessage(s.reader)).toMatchObject({ id: 1, result: {} });
    await s.close();
  });

  it('is off with legacySse: false (404)', async () => {
    const res = await fetch(new URL('/sse', offGw.base));
    expect(res.status).toBe(404);
    await res.body?.cancel();
  });
});
