/**
 * WebSocketSender (src/transport/websocket-sender.ts) against a socket that records each send: a
 * large message goes out as fragments across turns (FIN only on the last), the messages sent
 * meanwhile follow it in order, and a closed socket gets nothing more.
 */
import { describe, expect, it } from 'vitest';
import { WebSocketSender } from '../../src/transport/websocket-sender.js';
import { LARGE_TEXT_CHARS } from '../../src/timing/loop-turns.js';

function recordingSocket() {
  const sent: Array<{ data: string; fin: boolean }> = [];
  const socket = {
    OPEN: 1 as const,
    readyState: 1 as number,
    send: (data: string, options?: { fin?: boolean }) => void sent.push({ data, fin: options?.fin ?? true }),
  };
  return { sent, socket };
}

/** The messages a receiver puts together: fragments up to and including the one with FIN. */
function messages(sent: Array<{ data: string; fin: boolean }>): string[] {
  const out: string[] = [];
  let current = '';
  for (const s of sent) {
    current += s.data;
    if (s.fin) {
      out.push(current);
      current = '';
    }
  }
  return out;
}

const turns = (n: number) =>
  new Promise<void>((resolve) => {
    const next = (left: number) => (left === 0 ? resolve() : setImmediate(() => next(left - 1)));
    next(n);
  });

describe('WebSocketSender', () => {
  it('sends a small message as one frame, at once', () => {
    const { sent, socket } = recordingSocket();
    new WebSocketSender(socket as never).send('{"small":true}');
    expect(sent).toEqual([{ data: '{"small":true}', fin: true }]);
  });

  it('fragments a large message across turns and sends what came meanwhile after it, in order', async () => {
    const { sent, socket } = recordingSocket();
    const sender = new WebSocketSender(socket as never);
    const large = 'a😀'.repeat(LARGE_TEXT_CHARS);
    sender.send('first');
    sender.send(large);
    sender.send('after');
    sender.send(large + 'again');
    sender.send('last');
    // Nothing of the large one went out in this turn: its first fragment is a turn of its own (loop-turns.ts).
    expect(sent.map((s) => s.fin)).toEqual([true]);
    await turns(40);
    expect(messages(sent)).toEqual(['first', large, 'after', large + 'again', 'last']);
    expect(sent.filter((s) => !s.fin).length).toBeGreaterThan(4);
    for (const s of sent) expect(Buffer.from(s.data).toString()).toBe(s.data);
  });

  it('sends nothing more once the socket is no longer open', async () => {
    const { sent, socket } = recordingSocket();
    const sender = new WebSocketSender(socket as never);
    sender.send('x'.repeat(LARGE_TEXT_CHARS * 4));
    sender.send('queued');
    await turns(1);
    expect(sent.length).toBe(1);
    socket.readyState = 3;
    await turns(20);
    expect(sent.length).toBe(1);
    expect(sent.some((s) => s.data === 'queued')).toBe(false);
  });
});
