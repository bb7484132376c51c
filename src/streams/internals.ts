// What tests wait on inside the streams: behind a symbol, so it is no part of the API; only
// tests call settledOf().

export const SETTLED: unique symbol = Symbol('mcpgw.streams.settled');

/** Resolves when everything offered to the stream so far is written (or recorded). */
export function settledOf(stream: { [SETTLED](): Promise<void> }): Promise<void> {
  return stream[SETTLED]();
}
