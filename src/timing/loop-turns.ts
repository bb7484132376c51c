/**
 * Large messages across event-loop turns. The gateway parses and writes every JSON-RPC message on
 * its one event loop, and a 3.5 MB message held it for 20-56 ms at a time on a quiet 2-core VM
 * (55-85 ms under load): every other client's request due meanwhile waited that long. Writing such
 * a message in slices, one per turn, and parsing it in a turn of its own, lets the requests that
 * arrived in between through. Small messages, nearly all of them, keep their one synchronous write.
 */

/** Text longer than this (in UTF-16 units) is written in slices, and a body this long parsed in a turn of its own. */
export const LARGE_TEXT_CHARS = 256 * 1024;

/** One slice: encoding it to UTF-8 and handing it to the socket takes well under a millisecond. */
export const SLICE_CHARS = 128 * 1024;

/** Runs `fn` in a later turn of the event loop, after the I/O that is waiting (setImmediate's place). */
export function nextTurn(fn: () => void): void {
  setImmediate(fn);
}

/** Resolves in a later turn of the event loop (see nextTurn). */
export function afterTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Where `text` may be cut at or before `at` without splitting a surrogate pair: a pair cut in two
 * would be encoded as two replacement characters. JSON.stringify escapes lone surrogates, so in its
 * output one step back always lands between two whole characters.
 */
export function sliceEnd(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const before = text.charCodeAt(at - 1);
  return before >= 0xd800 && before <= 0xdbff ? at - 1 : at;
}

/**
 * Writes `text` through `write` in slices of `SLICE_CHARS`, one per event-loop turn from the next, and calls
 * `last` with the final slice (which may be empty) in place of `write`, then `done`. Stops, without
 * calling `last`, as soon as `stopped()` says the destination is gone. Text up to LARGE_TEXT_CHARS
 * goes to `last` at once, in this turn.
 */
export function writeAcrossTurns(text: string, sink: SliceSink, done: () => void = () => {}): void {
  if (text.length <= LARGE_TEXT_CHARS) {
    sink.last(text);
    done();
    return;
  }
  let from = 0;
  const step = (): void => {
    if (sink.stopped()) {
      done();
      return;
    }
    const to = sliceEnd(text, from + SLICE_CHARS);
    if (to >= text.length) {
      sink.last(text.slice(from));
      done();
      return;
    }
    sink.write(text.slice(from, to));
    from = to;
    nextTurn(step);
  };
  // The first slice in a turn of its own too: V8 builds a large JSON.stringify result in parts, and the first slice
  // copies them into one string (1.9 ms for 3.5 MB on a 2-core VM), a hold the turn that made the text need not add.
  nextTurn(step);
}

/** Where writeAcrossTurns puts the slices of one large text. */
export interface SliceSink {
  write(slice: string): void;
  last(slice: string): void;
  stopped(): boolean;
}

/**
 * What a stream sends behind a large message. While one is written a slice per turn, the messages
 * sent meanwhile wait here, in order; once it is out they go through `resend` (the stream's own
 * send, which may start another large message: the rest then waits behind that one), and
 * `onIdle` runs when nothing waits any more.
 */
export class TurnQueue {
  #waiting: string[] | undefined;

  constructor(
    private readonly resend: (text: string) => void,
    private readonly onIdle: () => void = () => {},
  ) {}

  /** A large message is being written. */
  get busy(): boolean {
    return this.#waiting !== undefined;
  }

  /** Keeps `text` to send later if a large message is being written; false if it may go now. */
  holds(text: string): boolean {
    if (this.#waiting === undefined) return false;
    this.#waiting.push(text);
    return true;
  }

  /** Writes `text` (over LARGE_TEXT_CHARS) a slice per turn through `sink`; what is held meanwhile goes after it. */
  writeLarge(text: string, sink: SliceSink): void {
    this.#waiting = [];
    writeAcrossTurns(text, sink, () => this.#drain());
  }

  #drain(): void {
    const waiting = this.#waiting ?? [];
    this.#waiting = undefined;
    for (let i = 0; i < waiting.length; i++) {
      this.resend(waiting[i]!);
      if (this.busy) {
        this.#waiting!.push(...waiting.slice(i + 1));
        return;
      }
    }
    this.onIdle();
  }
}
