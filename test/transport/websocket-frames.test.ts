/**
 * The WebSocket endpoint, frame by frame with a raw ws client: what goes on the wire in what
 * order, and the bad inputs: a frame that is not JSON (answered, the connection goes on), a
 * batch, a frame over the body limit (closed 1009), a client that never reads (cut off 1008,
 * nobody else disturbed), a plain GET (426), a bad Origin (403) and no token with auth on (401).
 */
import { channel } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';
import { startJwtIssuer, type JwtIssuer } from '../support/jwt-issuer.js';
import { until } from '../support/wait.js';
import { RawClient, wsUrl } from '../support/ws-client.js';

let gw: RunningGateway;
let authGw: RunningGateway;
let pingGw: RunningGateway;
let issuer: JwtIssuer;

/** The HTTP status an upgrade was refused with. */
function refusedUpgrade(base: string, options: WebSocket.ClientOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(base), 'mcp', options);
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('upgrade was accepted')));
    ws.once('error', () => undefined);
  });
}

beforeAll(async () => {
  issuer = await startJwtIssuer();
  gw = await startGateway(
    exampleConfig({ limits: { bodyBytes: 64 * 1024 }, websocket: { maxBufferedBytes: 64 * 1024 } }),
  );
  authGw = await startGateway(exampleConfig({ auth: issuer.authConfig }));
  pingGw = await startGateway(exampleConfig({ websocket: { pingIntervalMs: 200 } }));
});

afterAll(async () => {
  await Promise.all([gw?.stop(), authGw?.stop(), pingGw?.stop()]);
  await issuer?.close();
});

describe('WebSocket frames', () => {
  it('speaks subprotocol mcp and writes progress before the result, one message per frame', async () => {
    const c = await RawClient.open(gw.base);
    expect(c.ws.protocol).toBe('mcp');
    await c.initialize();
    c.send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'slow__sleep', arguments: { ms: 60, steps: 3 }, _meta: { progressToken: 'p' } },
    });
    await c.answerTo(5);
    const tail = c.messages.slice(-4);
    expect(tail.map((m) => (m.method as string | undefined) ?? `answer ${String(m.id)}`)).toEqual([
      'notifications/progress',
      'notifications/progress',
      'notifications/progress',
      'answer 5',
    ]);
    c.ws.close();
  });

  it('answers a frame that is not JSON with a parse error, and the connection goes on', async () => {
    const c = await RawClient.open(gw.base);
    c.send('this is not json');
    await c.answerTo(null);
    expect(c.messages[0]).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, data: { type: 'PARSE_ERROR' } },
    });
    c.send({ jsonrpc: '2.0', id: 'b', method: 'ping' });
    c.send([{ jsonrpc: '2.0', id: 'x', method: 'ping' }]);
    expect(await c.answerTo('b')).toMatchObject({ result: {} });
    await until('batch refused', () => c.messages.filter((m) => m.id === null).length === 2, 5000, 5);
    expect(c.messages.filter((m) => m.id === null)[1]).toMatchObject({ error: { code: -32600 } });
    c.send({ jsonrpc: '2.0', id: 'early', method: 'tools/list' });
    expect(await c.answerTo('early')).toMatchObject({ error: { code: -32600 } });
    expect(c.closed).toBeUndefined();
    c.ws.close();
  });

  it('closes a connection that sends a frame over limits.bodyBytes with 1009; its neighbour is untouched', async () => {
    const neighbour = await RawClient.open(gw.base);
    await neighbour.initialize();
    const c = await RawClient.open(gw.base);
    c.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70 * 1024) } }));
    await until('closed', () => c.closed !== undefined, 5000);
    expect(c.closed?.code).toBe(1009);
    neighbour.send({ jsonrpc: '2.0', id: 'n', method: 'tools/list' });
    expect(await neighbour.answerTo('n')).toMatchObject({ result: { tools: expect.any(Array) } });
    neighbour.ws.close();
  });

  it('cuts off a client that never reads (1008 past maxBufferedBytes); the others go on', async () => {
    const cut: unknown[] = [];
    const failures = channel('mcpgw:stream:cut-off');
    const onFailure = (m: unknown) => void ((m as { kind?: string }).kind === 'websocket' && cut.push(m));
    failures.subscribe(onFailure);
    try {
      const neighbour = await RawClient.open(gw.base);
      await neighbour.initialize();
      const sessionsBefore = await gw.gateway.store.size();
      const slow = await RawClient.open(gw.base);
      await slow.initialize();
      expect(await gw.gateway.store.size()).toBe(sessionsBefore + 1);
      // Stop reading: what the gateway sends piles up in the kernel's buffers, then in ws's.
      (slow.ws as unknown as { _socket: Socket })._socket.pause();
      for (let round = 0; round < 200 && cut.length === 0; round++) {
        for (let i = 0; i < 50; i++) slow.send({ jsonrpc: '2.0', id: `${round}-${i}`, method: 'tools/list' });
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(cut.length).toBe(1);
      await until('slow session ended', async () => (await gw.gateway.store.size()) === sessionsBefore, 5000);
      neighbour.send({ jsonrpc: '2.0', id: 'still', method: 'tools/list' });
      expect(await neighbour.answerTo('still')).toMatchObject({ result: { tools: expect.any(Array) } });
      expect(neighbour.closed).toBeUndefined();
      neighbour.ws.close();
      slow.ws.terminate();
    } finally {
      failures.unsubscribe(onFailure);
    }
  });

  it('ends a connection that stops answering pings; one that answers stays', async () => {
    const lively = await RawClient.open(pingGw.base);
    await lively.initialize();
    const silent = await RawClient.open(pingGw.base);
    await silent.initialize();
    expect(await pingGw.gateway.store.size()).toBe(2);
    (silent.ws as unknown as { _socket: Socket })._socket.pause(); // it reads no ping, so it sends no pong
    await until('silent session ended', async () => (await pingGw.gateway.store.size()) === 1, 5000);
    await new Promise((r) => setTimeout(r, 500)); // a few more ping rounds
    lively.send({ jsonrpc: '2.0', id: 'alive', method: 'ping' });
    expect(await lively.answerTo('alive')).toMatchObject({ result: {} });
    lively.ws.close();
    silent.ws.terminate();
  });

  it('answers a plain GET with 426 Upgrade Required', async () => {
    const res = await fetch(new URL('/ws', gw.base));
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ error: { data: { type: 'UPGRADE_REQUIRED' } } });
  });

  it('refuses an upgrade from a bad Origin (403)', async () => {
    expect(await refusedUpgrade(gw.base, { origin: 'https://evil.example' })).toBe(403);
  });

  it('with auth on: refuses an upgrade without a token (401), serves one with a token', async () => {
    expect(await refusedUpgrade(authGw.base, {})).toBe(401);
    expect(await refusedUpgrade(authGw.base, { headers: { authorization: 'Bearer not-a-jwt' } })).toBe(401);
    const c = await RawClient.open(authGw.base, { headers: await issuer.bearer('alice') });
    await c.initialize();
    c.send({ jsonrpc: '2.0', id: 't', method: 'tools/list' });
    expect(await c.answerTo('t')).toMatchObject({ result: { tools: expect.any(Array) } });
    c.ws.close();
  });
});
