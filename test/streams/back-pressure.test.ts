/**
 * Clients that stop reading their SSE stream: what the gateway writes for them piles up in the
 * kernel, then in the socket's buffer. Past `limits.maxStreamBufferedBytes` (default 4 MiB) of
 * unsent bytes the stream is cut off and counted (`mcpgw_streams_cut_off_total{kind}`), its calls
 * are released, and other clients go on. A real gateway, real child processes, raw sockets over
 * loopback that never read (the kernel's buffers take a few MiB first, so each test sends several
 * times the bound). What is asserted is that the cut happens, not when.
 */
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
import { legacyEcho, LEGACY_INIT, openLegacyStream, postLegacy } from '../support/legacy-sse.js';
import { httpRequest, rawSocket, type RawSocket } from '../support/raw-socket.js';
import { statelessRequest } from '../support/stateless.js';
import { SseReader } from '../support/sse.js';
import { until } from '../support/wait.js';

const HEADERS = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
const cutOffs = (gw: RunningGateway, kind: string) => metricValue(gw, `mcpgw_streams_cut_off_total{kind="${kind}"}`);
const openStreams = (gw: RunningGateway, kind: string) => metricValue(gw, `mcpgw_sse_streams_open{kind="${kind}"}`);

async function echo(gw: RunningGateway, sid: string, text: string): Promise<string> {
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'echo__echo', arguments: { text } } },
    HEADERS(sid),
  );
  return r.json?.result?.content?.[0]?.text as string;
}

let gw: RunningGateway;
const sockets: RawSocket[] = [];

beforeAll(async () => {
  gw = await startGateway(exampleConfig({ legacySse: { graceMs: 100 } }));
});

afterAll(async () => {
  for (const s of sockets) s.socket.destroy();
  await gw?.stop();
});

describe('limits.maxStreamBufferedBytes', () => {
  it('a POST reply stream of progress nobody reads is cut off, and its call cancelled', async () => {
    const sid = await openSession(gw.url);
    // 16 KiB echoed in every progress notification, one a millisecond, for a minute.
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'slow__sleep',
        arguments: { ms: 60_000, steps: 60_000 },
        _meta: { progressToken: 'p'.repeat(16 * 1024) },
      },
    });
    const reader = rawSocket(gw.base, httpRequest('POST', '/mcp', { ...MCP_HEADERS, ...HEADERS(sid) }, body));
    sockets.push(reader);
    reader.socket.pause(); // never reads a byte

    await until('the reply stream to be cut off', async () => (await cutOffs(gw, 'reply')) === 1, 20_000, 100);
    // The call behind it is cancelled (its worker slot given back), not left to run its minute.
    await untilNothingHeld(gw);
    reader.socket.resume();
    await until('the client to see its stream end', () => reader.closed());
    expect(reader.received()).toMatch(/^HTTP\/1\.1 200 /);

    expect(await echo(gw, sid, 'after the cut')).toBe('after the cut');
    expect(await cutOffs(gw, 'reply')).toBe(1);
  });

  it('a stateless (2026-07-28) reply stream nobody reads is cut off, and its call released', async () => {
    const before = await cutOffs(gw, 'reply');
    const { body, headers } = statelessRequest(3, 'tools/call', {
      name: 'slow__sleep',
      arguments: { ms: 60_000, steps: 60_000 },
      _meta: { progressToken: 's'.repeat(16 * 1024) },
    });
    const reader = rawSocket(
      gw.base,
      httpRequest('POST', '/mcp', { ...MCP_HEADERS, ...headers }, JSON.stringify(body)),
    );
    sockets.push(reader);
    reader.socket.pause();
    await until('the reply stream to be cut off', async () => (await cutOffs(gw, 'reply')) === before + 1, 20_000, 100);
    await untilNothingHeld(gw);
    const sid = await openSession(gw.url);
    expect(await echo(gw, sid, 'after the stateless cut')).toBe('after the stateless cut');
  });

  it('a session GET stream nobody reads is cut off; the session opens a new one', async () => {
    const sid = await openSession(gw.url);
    const reader = rawSocket(gw.base, httpRequest('GET', '/mcp', { accept: 'text/event-stream', ...HEADERS(sid) }));
    sockets.push(reader);
    await until('the GET stream to open', () => reader.received().startsWith('HTTP/1.1 200'));
    reader.socket.pause();
    expect(await openStreams(gw, 'get')).toBe(1);

    // What an upstream's notifications for the session would be: 256 KiB each, up to 24 MiB.
    const note = {
      jsonrpc: '2.0' as const,
      method: 'notifications/message',
      params: { level: 'info', data: 'n'.repeat(256 * 1024) },
    };
    for (let i = 0; i < 96 && (await cutOffs(gw, 'get')) === 0; i++) {
      gw.gateway.streams.send(sid, note);
      await new Promise((r) => setTimeout(r, 5));
    }
    await until('the GET stream to be cut off', async () => (await cutOffs(gw, 'get')) === 1, 10_000, 100);
    await until(
      'its stream slot to be free',
      async () => (await openStreams(gw, 'get')) === 0 && !gw.gateway.streams.has(sid),
    );

    const controller = new AbortController();
    const again = await fetch(gw.url, {
      headers: { accept: 'text/event-stream', ...HEADERS(sid) },
      signal: controller.signal,
    });
    expect(again.status).toBe(200);
    expect(await echo(gw, sid, 'still here')).toBe('still here');
    controller.abort();
    await untilNothingHeld(gw);
  });

  it('a legacy /sse stream whose client POSTs big calls and never reads is cut off; its session ends', async () => {
    const sessionsBefore = await gw.gateway.store.size();
    const reader = rawSocket(gw.base, httpRequest('GET', '/sse', { accept: 'text/event-stream' }));
    sockets.push(reader);
    await until('the endpoint event', () => /event: endpoint\ndata: (\S+)\n/.test(reader.received()));
    const endpoint = new URL(/event: endpoint\ndata: (\S+)\n/.exec(reader.received())![1]!, gw.base);
    reader.socket.pause();
    expect(await postLegacy(endpoint, LEGACY_INIT)).toBe(202);
    expect(await postLegacy(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);

    // 512 KiB echoed by each call, its answer sent on the stream: up to 32 MiB.
    const text = 'x'.repeat(512 * 1024);
    let answers = 0;
    for (; answers < 64 && (await cutOffs(gw, 'legacy-sse')) === 0; answers++) {
      const status = await postLegacy(endpoint, {
        jsonrpc: '2.0',
        id: answers,
        method: 'tools/call',
        params: { name: 'echo__echo', arguments: { text } },
      });
      if (status !== 202) break; // the session already ended
    }
    await until('the legacy stream to be cut off', async () => (await cutOffs(gw, 'legacy-sse')) === 1, 20_000, 100);
    // Its session ends (graceMs after the stream), and with it whatever it had in flight.
    await until('the session to end', async () => (await gw.gateway.store.size()) === sessionsBefore);
    expect(await openStreams(gw, 'legacy-sse')).toBe(0);
    await untilNothingHeld(gw);
    reader.socket.resume();
    await until('the client to see its stream end', () => reader.closed());
    // It got what the kernel's buffers held; the rest of its answers were dropped with the stream, not kept.
    expect(reader.received().length).toBeLessThan(answers * text.length);

    const other = await openLegacyStream(gw.base);
    expect(await legacyEcho(other, 'next client')).toBe('next client');
    other.close();
  });

  it('a client that reads is not cut off, though its stream carries far more than the bound', async () => {
    const sid = await openSession(gw.url);
    const before = await cutOffs(gw, 'reply');
    // 120 notifications of 64 KiB, 10 ms apart: 7.5 MiB in all, read as they come.
    const body = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'slow__sleep',
        arguments: { ms: 1200, steps: 120 },
        _meta: { progressToken: 'q'.repeat(64 * 1024) },
      },
    };
    const stream = await fetch(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...HEADERS(sid) },
      body: JSON.stringify(body),
    });
    const events = await new SseReader(stream).rest(20_000);
    expect(events.filter((e) => e.data !== '').length).toBe(121);
    expect(await cutOffs(gw, 'reply')).toBe(before);
  });
});
