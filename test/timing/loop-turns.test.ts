/**
 * A large message across event-loop turns (src/timing/loop-turns.ts): the slices put together are
 * the text, byte for byte once encoded, a surrogate pair is never cut, other work runs between
 * slices, and a destination that goes away stops the writing; and what is sent behind a large
 * message (TurnQueue) goes after it, in order, behind a second large one too.
 */
import { describe, expect, it } from 'vitest';
import { LARGE_TEXT_CHARS, SLICE_CHARS, sliceEnd, TurnQueue, writeAcrossTurns } from '../../src/timing/loop-turns.js';

function collect(text: string, stopAfter = Infinity) {
  const slices: string[] = [];
  let last: string | undefined;
  let done = false;
  const finished = new Promise<void>((resolve) =>
    writeAcrossTurns(
      text,
      {
        write: (s) => slices.push(s),
        last: (s) => (last = s),
        stopped: () => slices.length >= stopAfter,
      },
      () => {
        done = true;
        resolve();
      },
    ),
  );
  return { slices, finished, last: () => last, done: () => done };
}

describe('writeAcrossTurns', () => {
  it('writes text up to the large size at once, in this turn, through last', () => {
    const text = 'a'.repeat(LARGE_TEXT_CHARS);
    const w = collect(text);
    expect(w.done()).toBe(true);
    expect(w.slices).toEqual([]);
    expect(w.last()).toBe(text);
  });

  it('writes a large text in slices, one per turn, that join back to it', async () => {
    const text = 'é€'.repeat(LARGE_TEXT_CHARS);
    const w = collect(text);
    // Nothing is written in this turn, which made the text: the first slice, which flattens it, is a hold of its own.
    expect(w.slices.length).toBe(0);
    expect(w.done()).toBe(false);
    // Work queued meanwhile runs between slices: a ticker that re-queues itself each turn.
    let between = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      if (!w.done()) between++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await w.finished;
    ticking = false;
    expect(w.slices.join('') + w.last()).toBe(text);
    expect(Buffer.concat([...w.slices, w.last()!].map((s) => Buffer.from(s))).equals(Buffer.from(text))).toBe(true);
    expect(w.slices.length).toBe(Math.ceil(text.length / SLICE_CHARS) - 1);
    expect(between).toBeGreaterThan(0);
  });

  it('never cuts a surrogate pair, wherever the slice boundary falls', async () => {
    // A pair at every offset around each boundary: one extra char shifts where pairs fall.
    for (const pad of ['', 'a']) {
      const text = pad + '😀'.repeat(LARGE_TEXT_CHARS);
      const w = collect(text);
      await w.finished;
      // A cut pair would leave a lone surrogate, which UTF-8 cannot carry: it comes back as U+FFFD.
      for (const s of [...w.slices, w.last()!]) expect(Buffer.from(s).toString()).toBe(s);
      expect(w.slices.join('') + w.last()).toBe(text);
    }
  });

  it('stops when the destination is gone, without the last slice, and says done', async () => {
    const w = collect('x'.repeat(LARGE_TEXT_CHARS * 4), 2);
    await w.finished;
    expect(w.slices.length).toBe(2);
    expect(w.last()).toBeUndefined();
  });
});

describe('sliceEnd', () => {
  it('steps back one unit from inside a surrogate pair, and nowhere else', () => {
    const text = 'ab😀cd';
    expect(sliceEnd(text, 3)).toBe(2); // between the two halves of 😀
    expect(sliceEnd(text, 2)).toBe(2);
    expect(sliceEnd(text, 4)).toBe(4);
    expect(sliceEnd(text, 99)).toBe(text.length);
  });
});

describe('TurnQueue', () => {
  it('holds what is sent behind large messages and sends it after them, in order', async () => {
    const out: string[] = [];
    let idle = 0;
    const large = (tag: string) => tag + 'x'.repeat(LARGE_TEXT_CHARS);
    const send = (text: string): void => {
      if (queue.holds(text)) return;
      if (text.length <= LARGE_TEXT_CHARS) out.push(text);
      else
        queue.writeLarge(text, {
          write: () => {},
          last: () => out.push(text.slice(0, 1)),
          stopped: () => false,
        });
    };
    const queue: TurnQueue = new TurnQueue(send, () => idle++);
    expect(queue.holds('a')).toBe(false);
    send(large('L'));
    expect(queue.busy).toBe(true);
    for (const t of ['b', large('M'), 'c']) send(t);
    expect(out).toEqual([]);
    while (queue.busy) await new Promise((r) => setImmediate(r));
    // 'c' waited behind the second large message, which itself waited behind the first.
    expect(out).toEqual(['L', 'b', 'M', 'c']);
    expect(idle).toBe(1);
  });
});
