/**
 * A large answer over the WebSocket transport, through a real gateway, a real echo server and the
 * ws client: the gateway sends it fragmented across event-loop turns (transport/websocket-sender.ts)
 * and the client puts it back together whole; a small call beside it is answered too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { untilNothingHeld } from '../support/health.js';
import { RawClient } from '../support/ws-client.js';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw?.stop());

describe('WebSocket: a large answer', () => {
  it('arrives whole (1.4 M mixed-width characters), and a small call beside it is answered', async () => {
    const client = await RawClient.open(gw.base);
    await client.initialize();
    const text = 'aé€😀b😀'.repeat(200_000);
    const call = (id: number, t: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo__echo', arguments: { text: t } },
    });
    client.send(call(1, text));
    client.send(call(2, 'small'));
    const [large, small] = await Promise.all([client.answerTo(1, 15_000), client.answerTo(2, 15_000)]);
    expect(toolText(large.result)).toBe(text);
    expect(toolText(small.result)).toBe('small');
    client.ws.close();
    await untilNothingHeld(gw);
  });
});
