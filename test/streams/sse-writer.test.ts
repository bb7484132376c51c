/**
 * The SSE writer on a real HTTP response over loopback: a large event goes out a slice per turn
 * (timing/loop-turns.ts), and what is sent after it, the end included, waits behind it, so the
 * reader sees every event whole and in order.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseWriter } from '../../src/streams/sse-writer.js';
import { LARGE_TEXT_CHARS } from '../../src/timing/loop-turns.js';
import { messagesOf, parseSse } from '../support/sse.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves one GET with `write` and returns what the client read, whole. */
async function readStream(write: (writer: SseWriter, res: ServerResponse) => void): Promise<string> {
  server = createServer((_req, res) => {
    const writer = new SseWriter(res, { maxBufferedBytes: 64 * 1024 * 1024, cutOff: () => undefined });
    writer.open({});
    write(writer, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/`);
  return res.text();
}

const note = (n: number, text = '') => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/message',
  params: { n, text },
});

describe('SseWriter with large events', () => {
  it('keeps the order of events sent after a large one, two large ones included, and ends after them', async () => {
    const large = '😀é'.repeat(LARGE_TEXT_CHARS);
    let written = 0;
    const text = await readStream((writer, res) => {
      const write = res.write.bind(res);
      res.write = ((chunk: string) => (written++, write(chunk))) as typeof res.write;
      writer.send(note(1));
      writer.send(note(2, large), 'e2');
      // Still writing the large event: these wait, in order, and so does the end.
      writer.send(note(3));
      writer.send(note(4, large));
      writer.comment('keep-alive');
      writer.send(note(5));
      writer.end();
      expect(writer.closed).toBe(false);
    });
    const events = parseSse(text);
    expect(messagesOf(events).map((m) => m.params.n)).toEqual([1, 2, 3, 4, 5]);
    expect(messagesOf(events).map((m) => m.params.text === large)).toEqual([false, true, false, true, false]);
    expect(events.find((e) => e.id === 'e2')).toBeDefined();
    // Sliced: far more writes than the seven events and the comment.
    expect(written).toBeGreaterThan(10);
  });

  it('writes a small event at once, in the same turn, and ends at once', async () => {
    const text = await readStream((writer, res) => {
      let written = 0;
      const write = res.write.bind(res);
      res.write = ((chunk: string) => (written++, write(chunk))) as typeof res.write;
      writer.send(note(1, 'small'));
      expect(written).toBe(1);
      writer.end();
      expect(writer.closed).toBe(true);
    });
    expect(messagesOf(parseSse(text)).map((m) => m.params.n)).toEqual([1]);
  });
});
