/**
 * limits.maxBodyBytesPerSecondPerClient on WebSocket: a client's frames count against its byte
 * share as POST bodies do, paced instead of refused (the socket is not read until the debt is
 * paid). Over a real socket: a burst past the share is answered in full and in order, but no
 * sooner than the share allows; another client is served meanwhile; nothing stays held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleConfig, openSession, post, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { RawClient } from '../support/ws-client.js';

// A bucket of 32,768 bytes (4 s at 8,192 bytes/s).
const RATE = 8192;
let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway(
    exampleConfig({
      limits: { bodyBytes: 16_384, maxBodyBytesPerSecondPerClient: RATE },
    }),
  );
});
afterAll(async () => {
  await gw?.stop();
});

const echo = (id: number, chars: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'echo__echo', arguments: { text: 'x'.repeat(chars) } },
});

describe('WebSocket frames past the client byte share', () => {
  it('are answered in full and in order, no sooner than the share allows, while another client is served', async () => {
    const client = await RawClient.open(gw.base, { localAddress: '127.0.0.4' });
    try {
      await client.initialize();
      const frames = Array.from({ length: 8 }, (_, i) => JSON.stringify(echo(i + 1, 8000)));
      const bytes = frames.reduce((n, f) => n + Buffer.byteLength(f), 0);
      const started = Date.now();
      for (const f of frames) client.send(f);

      // Meanwhile a client on another address has its own share.
      const sid = await openSession(gw.url);
      const other = await post(gw.url, echo(99, 100), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
      expect(other.status).toBe(200);
      const otherDoneMs = Date.now() - started;

      const answers = [];
      for (let id = 1; id <= 8; id++) answers.push(await client.answerTo(id, 15_000));
      const elapsedMs = Date.now() - started;
      for (const a of answers) expect(toolText(a.result)).toHaveLength(8000);
      const ids = client.messages.filter((m) => typeof m.id === 'number').map((m) => m.id);
      expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // The bucket held 4 s of the rate (less what initialize took); the rest is paid at the rate.
      const leastMs = ((bytes - 4 * RATE) / RATE) * 1000;
      expect(elapsedMs).toBeGreaterThanOrEqual(leastMs - 250);
      expect(otherDoneMs).toBeLessThan(leastMs);
      await untilNothingHeld(gw);
    } finally {
      client.ws.close();
    }
  }, 30_000);
});
