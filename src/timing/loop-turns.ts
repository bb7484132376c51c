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
 * Writes `text` through `write` in slices of `SLICE_CHARS`, one per event-loop turn, and calls
 * `last` with the final slice (which may be empty) in place of `write`, then `done`. Stops, without
 * calling `last`, as soon as `stopped()` says the destination is gone. Text up to LARGE_TEXT_CHARS
 * goes to `last` at once, in this turn.
 */
export function writeAcrossTurns(
  text: string,
  sink: { write(slice: string): void; last(slice: string): void; stopped(): boolean },
  done: () => void = () => {},
): void {
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
  step();
}
