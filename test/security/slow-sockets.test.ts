/**
 * Sockets that stall: half a request line, headers and then no body, or nothing at all. Each is
 * closed by the gateway once its timeout (server.headersTimeoutMs / requestTimeoutMs) runs out,
 * with a JSON-RPC 408, while an SSE stream that stays open far longer is not cut. Past
 * server.maxConnections, new connections are closed at once, and the gateway goes on serving
 * once the others are gone. Timeouts are short here (1–1.5 s); what is asserted is that the
 * sockets get closed, not how fast.
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
import { until } from '../support/wait.js';
import { rawSocket, type RawSocket } from '../support/raw-socket.js';

const SHORT = { headersTimeoutMs: 1000, requestTimeoutMs: 1500, keepAliveTimeoutMs: 1000 };

async function echoCall(gw: RunningGateway, text: string): Promise<string> {
  const sid = await openSession(gw.url);
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__echo', arguments: { text } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  expect(r.status).toBe(200);
  return r.json.result.content[0].text as string;
}

async function echoInFlight(gw: RunningGateway): Promise<number> {
  const body = (await (await fetch(new URL('/readyz', gw.base))).json()) as {
    upstreams: Record<string, { inFlight: number }>;
  };
  return body.upstreams.echo!.inFlight;
}

describe('stalled sockets', () => {
  let gw: RunningGateway;
  const opened: RawSocket[] = [];

  beforeAll(async () => {
    gw = await startGateway(exampleConfig({ server: SHORT, sse: { keepAliveMs: 1000 } }));
  });
  afterAll(async () => {
    for (const s of opened) s.socket.destroy();
    await gw?.stop();
  });

  it('are each closed with a JSON-RPC 408, while an SSE GET stream open longer than every timeout is not cut', async () => {
    const sid = await openSession(gw.url);
    const sse = rawSocket(
      gw.base,
      `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n`,
    );
    opened.push(sse);
    await until('the SSE stream to open', () => sse.received().startsWith('HTTP/1.1 200'));

    const halfLine = rawSocket(gw.base, 'POST /mc');
    const noBody = rawSocket(
      gw.base,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: ${MCP_HEADERS.accept}\r\nContent-Length: 100\r\n\r\n`,
    );
    const silent = rawSocket(gw.base);
    opened.push(halfLine, noBody, silent);
    await until(
      'every stalled socket to be closed by the gateway',
      () => halfLine.closed() && noBody.closed() && silent.closed(),
      20_000,
    );
    for (const s of [halfLine, noBody, silent]) {
      expect(s.received()).toMatch(/^HTTP\/1\.1 408 /);
      const body = JSON.parse(s.received().slice(s.received().indexOf('\r\n\r\n') + 4)) as {
        error: { code: number; data: { type: string } };
      };
      expect(body.error).toMatchObject({ code: -32000, data: { type: 'REQUEST_TIMEOUT' } });
    }

    // The stream outlives every timeout (each of them has run out by now) and keeps flowing.
    const before = sse.received().length;
    await until(
      'two more keep-alive comments on the SSE stream',
      () => sse.received().length > before && (sse.received().match(/: keep-alive/g)?.length ?? 0) >= 2,
      10_000,
    );
    const later = sse.received().length;
    await until('another keep-alive comment', () => sse.received().length > later, 10_000);
    expect(sse.closed()).toBe(false);

    expect(await echoCall(gw, 'after the stalls')).toBe('after the stalls');
    expect(await echoInFlight(gw)).toBe(0);
  });

  it('a keep-alive connection left idle after its request is closed too', async () => {
    const idle = rawSocket(gw.base, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    opened.push(idle);
    await until('the keep-alive connection to be closed', () => idle.closed(), 20_000);
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(await echoCall(gw, 'after idle keep-alive')).toBe('after idle keep-alive');
  });
});

describe('server.maxConnections', () => {
  let gw: RunningGateway;
  const opened: RawSocket[] = [];

  beforeAll(async () => {
    gw = await startGateway(exampleConfig({ server: { ...SHORT, maxConnections: 5 } }));
  });
  afterAll(async () => {
    for (const s of opened) s.socket.destroy();
    await gw?.stop();
  });

  it('refuses connections past the cap, and serves health and MCP calls again once the idle ones are gone', async () => {
    for (let i = 0; i < 12; i++) opened.push(rawSocket(gw.base));
    // Those past the cap are closed at once; the rest when their headers timeout runs out.
    await until('every idle socket to be closed', () => opened.every((s) => s.closed()), 20_000);
    const refused = opened.filter((s) => s.received() === '').length;
    expect(refused).toBeGreaterThanOrEqual(12 - 5);

    const health = await fetch(new URL('/healthz', gw.base));
    expect(health.status).toBe(200);
    expect(await echoCall(gw, 'after the flood')).toBe('after the flood');
    const metrics = await (await fetch(new URL('/metrics', gw.base))).text();
    const count = Number(/^mcpgw_connections_refused_total (\d+)/m.exec(metrics)?.[1]);
    expect(count).toBeGreaterThanOrEqual(12 - 5);
    expect(await echoInFlight(gw)).toBe(0);
  });
});
