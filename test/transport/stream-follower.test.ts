/**
 * StreamFollower: whatever order events arrive in (replay, bus, local appends, lost or repeated
 * bus messages), one SSE reply gets each event once, in stream order. A real MemoryEventStore
 * and MemoryBus; the reply is a stand-in for a Node ServerResponse that records what is written.
 */
import { EventEmitter } from 'node:events';
import { settledOf } from '../../src/streams/internals.js';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DataPathEvents } from '../../src/observability/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { MemoryBus } from '../../src/cluster/memory-bus.js';
import { MemoryEventStore } from '../../src/streams/memory-event-store.js';
import { SseWriter } from '../../src/streams/sse-writer.js';
import { StreamFollower } from '../../src/streams/stream-follower.js';
import { StreamServices } from '../../src/streams/stream-services.js';
import { parseSse } from '../support/sse.js';

class FakeResponse extends EventEmitter {
  text = '';
  destroyed = false;
  ended = false;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
  end(): void {
    this.ended = true;
    this.emit('close');
  }
}

function setup() {
  const events = new MemoryEventStore({ maxEvents: 100, maxAgeMs: 60_000 });
  const services = new StreamServices({
    events,
    bus: new MemoryBus(),
    retryMs: 100,
    diagnostics: new DataPathEvents('stream-follower-test'),
    log: createLogger('silent'),
  });
  const raw = new FakeResponse();
  const writer = new SseWriter(raw as unknown as ServerResponse, {
    maxBufferedBytes: Infinity,
    cutOff: () => undefined,
  });
  return { events, services, raw, writer };
}

const note = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } });

describe('StreamFollower', () => {
  it('writes each event once and in order, however the bus delivers them', async () => {
    const { events, services, raw, writer } = setup();
    const start = (await events.append('s', 'get', undefined))!;
    const e = [];
    for (let i = 1; i <= 5; i++) e.push((await events.append('s', 'get', note(i)))!);
    const follower = new StreamFollower(services, 's', 'get', writer, start.position);
    follower.start();
    // Reordered, repeated, and with e[1] lost on the bus: the gap is read from the store.
    for (const ev of [e[2]!, e[0]!, e[2]!, e[3]!, e[0]!, e[4]!, e[4]!]) follower.offer(ev);
    await settledOf(follower);
    const written = parseSse(raw.text);
    expect(written.map((w) => JSON.parse(w.data).params.n)).toEqual([1, 2, 3, 4, 5]);
    expect(written.map((w) => w.id)).toEqual(e.map((x) => `get.${x.position}`));
    await events.close();
  });

  it('writes the replay, then what arrived during it, skipping what the replay covered', async () => {
    const { events, services, raw, writer } = setup();
    const start = (await events.append('s', 'p', undefined))!;
    const e1 = (await events.append('s', 'p', note(1)))!;
    const e2 = (await events.append('s', 'p', note(2)))!;
    const follower = new StreamFollower(services, 's', 'p', writer, start.position, { onFinal: () => writer.end() });
    follower.offer(e2); // arrived on the bus while the replay was being read
    const e3 = (await events.append('s', 'p', { jsonrpc: '2.0', id: 1, result: {} }, { final: true }))!;
    follower.offer(e3);
    follower.start([e1, e2]);
    await settledOf(follower);
    expect(parseSse(raw.text).map((w) => w.id)).toEqual([e1, e2, e3].map((x) => `p.${x.position}`));
    expect(raw.ended).toBe(true); // the final event ends the reply
    await events.close();
  });

  it('ends a resumed reply whose position the store no longer holds, rather than skip events silently', async () => {
    const { events, services, raw, writer } = setup();
    const follower = new StreamFollower(services, 's', 'p', writer, '1-0');
    follower.start();
    const e = (await events.append('s', 'p', note(1)))!; // previous '' ≠ 1-0: a gap it cannot fill
    follower.offer(e);
    await settledOf(follower);
    expect(raw.text).toBe('');
    expect(raw.ended).toBe(true);
    await events.close();
  });
});
