/**
 * limits.maxBodyBytesPerSecondPerClient: one client's request bodies are bounded per second, so
 * its megabytes cannot take the event loop every client shares. The bucket alone, then a real
 * gateway over loopback with two clients on two loopback addresses (a client without auth is
 * its address): the one past its share gets a typed 429 before its body is parsed, the other
 * is served, and nothing stays held.
 */
import { connect } from 'node:net';
import { Agent, fetch as fetchFrom } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { ClientByteRate } from '../../src/transport/client-byte-rate.js';
import {
  exampleConfig,
  MCP_HEADERS,
  openSession,
  post,
  startGateway,
  toolText,
  type RunningGateway,
} from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';

function refusal(fn: () => void): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('ClientByteRate', () => {
  it('holds 4 s of its rate (at least one largest body), refills with time, and says when to retry', () => {
    const rate = new ClientByteRate(1000, 2000);
    rate.take('a', 4000, 0);
    const err = refusal(() => rate.take('a', 500, 0));
    expect(err.type).toBe('CLIENT_TOO_MANY_BYTES');
    expect(err.detail).toMatchObject({ retryAfterMs: 500, limit: 1000 });
    rate.take('b', 4000, 0); // another client has its own bucket
    rate.take('a', 500, 500);
    expect(() => rate.take('a', 1, 500)).toThrow(GatewayError);
  });

  it('always lets one body of the largest size through to a client with a full bucket', () => {
    const rate = new ClientByteRate(10, 5000);
    rate.take('a', 5000, 0);
    expect(refusal(() => rate.take('a', 5000, 0)).detail).toMatchObject({ retryAfterMs: 500_000 });
  });

  it('debits past the share (at most one burst deep) and says when the debt is paid', () => {
    const rate = new ClientByteRate(1000, 2000);
    expect(rate.debit('a', 3000, 0)).toBe(0);
    expect(rate.debit('a', 2000, 0)).toBe(1000); // 1,000 in debt
    expect(rate.debit('a', 10 ** 6, 0)).toBe(4000); // never deeper than one bucket
    expect(rate.debit('a', 0, 4000)).toBe(0);
    expect(() => rate.take('a', 1, 4000)).toThrow(GatewayError);
  });

  it('0 bounds nothing, and neither does an unknown client', () => {
    const off = new ClientByteRate(0, 1024);
    off.take('a', 10 ** 9, 0);
    const on = new ClientByteRate(1, 1024);
    on.take(undefined, 10 ** 9, 0);
    on.rate = 0;
    on.take('a', 10 ** 9, 0);
  });
});

describe('a gateway with limits.maxBodyBytesPerSecondPerClient', () => {
  let gw: RunningGateway;
  const other = new Agent({ localAddress: '127.0.0.2' });
  beforeAll(async () => {
    // Buckets of 128 KiB (4 s at 32 KiB/s), refilled slowly enough that the test cannot race them.
    gw = await startGateway(exampleConfig({ limits: { bodyBytes: 65536, maxBodyBytesPerSecondPerClient: 32768 } }));
  });
  afterAll(async () => {
    await gw?.stop();
    await other.close();
  });

  const echo = (id: number, chars: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo__echo', arguments: { text: 'x'.repeat(chars) } },
  });

  it('refuses a client past its share with 429 CLIENT_TOO_MANY_BYTES and Retry-After; another client is served', async () => {
    const sid = await openSession(gw.url);
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let id = 1; id <= 4 && !refused; id++) {
      const res = await post(gw.url, echo(id, 60_000), headers);
      if (res.status === 200) expect(toolText(res.json.result)).toHaveLength(60_000);
      else refused = res;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.json.error).toMatchObject({ code: -32015, data: { type: 'CLIENT_TOO_MANY_BYTES', limit: 32768 } });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // From another address (another client): its own share, and its session works.
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const opened = await fetchFrom(gw.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify(init),
      dispatcher: other,
    });
    expect(opened.status).toBe(200);
    await opened.text();
    const sid2 = opened.headers.get('mcp-session-id')!;
    const res = await fetchFrom(gw.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sid2, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(echo(9, 60_000)),
      dispatcher: other,
    });
    const body = await res.text();
    expect(res.status, body).toBe(200);
    expect(toolText((JSON.parse(body) as { result: unknown }).result)).toHaveLength(60_000);

    // A small body still fits the refused client's bucket once a little has come back: not a ban.
    const small = await post(gw.url, echo(10, 10), headers);
    expect(small.status).toBe(200);
    await untilNothingHeld(gw);
  }, 30_000);

  it('refuses a body its Content-Length announces before reading a byte of it, and closes that connection', async () => {
    // A client of its own (127.0.0.3): two bodies of 60,000 bytes fill its 128 KiB bucket.
    const { hostname, port } = new URL(gw.url);
    const raw = (head: string, body: string) =>
      new Promise<{ reply: string; closed: boolean }>((resolve) => {
        const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.0.3' });
        let reply = '';
        const timer = setTimeout(() => {
          socket.destroy();
          resolve({ reply, closed: false });
        }, 5000);
        socket.on('connect', () => socket.write(head + body));
        socket.on('data', (d) => (reply += d.toString('latin1')));
        socket.on('close', () => {
          clearTimeout(timer);
          resolve({ reply, closed: true });
        });
        socket.on('error', () => undefined);
      });
    const head = (length: number) =>
      `POST ${new URL(gw.url).pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
      `content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
      `content-length: ${length}\r\nconnection: close\r\n\r\n`;
    const body = JSON.stringify(echo(1, 60_000 - 100)).padEnd(60_000, ' ');
    for (let i = 0; i < 2; i++) expect((await raw(head(60_000), body)).reply).not.toMatch(/^HTTP\/1\.1 429/);
    // The headers only: were the body waited for, no reply would come (the test's 5 s timer would end it).
    const refused = await raw(head(60_000), '');
    expect(refused.closed).toBe(true);
    expect(refused.reply).toMatch(/^HTTP\/1\.1 429/);
    expect(refused.reply).toMatch(/retry-after: \d+/i);
    expect(refused.reply).toContain('"CLIENT_TOO_MANY_BYTES"');
    await untilNothingHeld(gw);
  }, 30_000);
});
