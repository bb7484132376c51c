/**
 * A stream's incoming frames, held to its client's byte share (limits.maxBodyBytesPerSecondPerClient)
 * by back-pressure: a frame past the share is charged anyway, the socket stops being read until
 * the debt is paid, and the frames held meanwhile are delivered in order after it. Nothing is
 * refused: a WebSocket frame has been read in full by the time it is seen, and refusing it
 * would take parsing it to learn which request to answer.
 */
export interface Pausable {
  pause(): void;
  resume(): void;
}

export class PacedFrames<F> {
  readonly #held: F[] = [];
  #timer: NodeJS.Timeout | undefined;

  /** `debit`: charges a frame, and says in how many ms its client's debt is paid (0: none). */
  constructor(
    private readonly socket: Pausable,
    private readonly debit: (frame: F | undefined) => number,
    private readonly deliver: (frame: F) => void,
  ) {}

  push(frame: F): void {
    const waitMs = this.debit(frame);
    if (this.#timer === undefined && waitMs === 0) return this.deliver(frame);
    this.#held.push(frame);
    if (this.#timer === undefined) this.#wait(waitMs);
  }

  /** The socket closed: nothing held is delivered. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#held.length = 0;
  }

  #wait(ms: number): void {
    this.socket.pause();
    this.#timer = setTimeout(() => {
      // Frames that arrived while paused (already buffered) added to the debt: wait for those too.
      const more = this.debit(undefined);
      if (more > 0) return this.#wait(more);
      this.#timer = undefined;
      for (const frame of this.#held.splice(0)) this.deliver(frame);
      this.socket.resume();
    }, ms);
  }
}
