import type { Dispatcher } from 'undici';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';

/** A message (or an error page) larger than this is a broken upstream, not something to buffer. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** What arrives before anyone reads is kept up to this; then the connection waits. */
const HIGH_WATER_BYTES = 256 * 1024;

/** An error body is read this far for a message, then cut. */
const SNIPPET_BYTES = 2048;

/** A body thrown away is read to its end (keeping the connection) only up to this. */
const DUMP_BYTES = 128 * 1024;

interface Reader {
  chunk(chunk: Buffer): void;
  end(): void;
  fail(err: unknown): void;
}

/**
 * The body of one upstream response, as undici's dispatch handler delivers it, read once: whole
 * (`text`), chunk by chunk as it comes (`each`), or thrown away (`dump`). Not a Readable: a
 * stream and its async iteration per upstream call cost more CPU than everything else the
 * gateway does for that call (load/: call-http). Chunks that come before a reader are kept,
 * the connection paused past HIGH_WATER_BYTES.
 */
export class ResponseBody {
  #queue: Buffer[] = [];
  #queued = 0;
  #state: 'open' | 'ended' | 'failed' = 'open';
  #error: unknown;
  #reader: Reader | undefined;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** True once it ended, failed or was destroyed: nothing more will come. */
  get destroyed(): boolean {
    return this.#state !== 'open';
  }

  /** @internal From the dispatch handler. */
  push(chunk: Buffer): void {
    if (this.#reader) {
      this.#reader.chunk(chunk);
      return;
    }
    this.#queue.push(chunk);
    this.#queued += chunk.length;
    if (this.#queued > HIGH_WATER_BYTES) this.controller.pause();
  }

  /** @internal From the dispatch handler. */
  end(): void {
    if (this.#state !== 'open') return;
    this.#state = 'ended';
    this.#reader?.end();
  }

  /** @internal From the dispatch handler. */
  fail(err: unknown): void {
    if (this.#state !== 'open') return;
    this.#state = 'failed';
    this.#error = err;
    this.#reader?.fail(err);
  }

  /** Stops the response (and its connection) and fails a read in progress with `reason`. */
  destroy(reason: unknown = new Error('response body destroyed')): void {
    if (this.#state !== 'open') return;
    this.fail(reason);
    this.controller.abort(reason instanceof Error ? reason : new Error(String(reason)));
  }

  /**
   * Hands each chunk to `onChunk` until the body ends. What `onChunk` throws stops the read:
   * the body is destroyed and the promise rejects with it.
   */
  each(onChunk: (chunk: Buffer) => void): Promise<void> {
    if (this.#reader) return Promise.reject(new Error('response body already read'));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const reader: Reader = {
        chunk: (chunk) => {
          if (settled) return;
          try {
            onChunk(chunk);
          } catch (err) {
            settled = true;
            this.destroy(err);
            reject(err);
          }
        },
        end: () => {
          if (settled) return;
          settled = true;
          resolve();
        },
        fail: (err) => {
          if (settled) return;
          settled = true;
          reject(err);
        },
      };
      this.#reader = reader;
      const queued = this.#queue;
      this.#queue = [];
      for (const chunk of queued) reader.chunk(chunk);
      if (this.#state === 'ended') reader.end();
      else if (this.#state === 'failed') reader.fail(this.#error);
      else if (this.controller.paused) this.controller.resume();
    });
  }

  /** The whole body as UTF-8, failing past `limit` bytes instead of buffering without end. */
  async text(limit = MAX_MESSAGE_BYTES, onChunk?: () => void): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    await this.each((chunk) => {
      onChunk?.();
      size += chunk.length;
      if (size > limit) throw new ExchangeFailure('protocol', `answer larger than ${limit} bytes`);
      chunks.push(chunk);
    });
    return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
  }

  /** Reads the body to its end and forgets it; a large or broken one just ends the connection. Never rejects. */
  async dump(): Promise<void> {
    let size = 0;
    await this.each((chunk) => {
      size += chunk.length;
      if (size > DUMP_BYTES) throw new Error('body too large to keep the connection for');
    }).catch(() => undefined);
  }

  /** The start of an error body, for a message: never the whole of a large page. Never rejects. */
  async snippet(): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    const enough = new Error('enough');
    try {
      await this.each((chunk) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size > SNIPPET_BYTES) throw enough;
      });
    } catch (err) {
      if (err !== enough) return '';
    }
    return Buffer.concat(chunks).toString('utf8').slice(0, 300).replace(/\s+/g, ' ').trim();
  }
}
