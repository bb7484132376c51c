import { GatewayError } from '../jsonrpc/errors.js';

/** Past this many buckets, full ones (clients quiet long enough to have their whole burst back) are forgotten. */
const PRUNE_AT = 10_000;

interface Bucket {
  /** Characters the client may still send now. */
  tokens: number;
  at: number;
}

/**
 * Characters of request bodies one client may send per second (limits.maxBodyBytesPerSecondPerClient),
 * as a token bucket holding `burstSeconds` seconds of its rate, and never less than one body of
 * the largest size: a client may send one large body at once, not one after another. Every
 * body a client sends costs the gateway parsing, copying and writing in proportion to its size,
 * on the one event loop every client shares: without a bound, one client sending megabytes back
 * to back takes most of that loop from the others (measured: 22 calls/s of 1 MB took 66 %).
 */
export class ClientByteRate {
  readonly #buckets = new Map<string, Bucket>();

  /** `perSecond` 0: no bound. */
  constructor(
    private perSecond: number,
    readonly largestBody: number,
    private readonly burstSeconds = 4,
  ) {}

  get rate(): number {
    return this.perSecond;
  }

  /** A reload's new rate, from the next body on (buckets keep what they hold, up to the new size). */
  set rate(perSecond: number) {
    this.perSecond = perSecond;
    if (perSecond === 0) this.#buckets.clear();
  }

  /**
   * Takes `chars` from `client`'s bucket, or throws CLIENT_TOO_MANY_BYTES (429, with
   * data.retryAfterMs: when the bucket will hold that much again). Undefined clients are not bounded.
   */
  take(client: string | undefined, chars: number, now = Date.now()): void {
    if (this.perSecond === 0 || client === undefined) return;
    const size = this.#size();
    const bucket = this.#refilled(client, size, now);
    if (bucket.tokens < chars) {
      const retryAfterMs = Math.ceil(((Math.min(chars, size) - bucket.tokens) / this.perSecond) * 1000);
      throw new GatewayError(
        'CLIENT_TOO_MANY_BYTES',
        `This client sent more than limits.maxBodyBytesPerSecondPerClient (${this.perSecond}) allows: retry in ` +
          `${retryAfterMs} ms`,
        { retryAfterMs, limit: this.perSecond },
      );
    }
    bucket.tokens -= chars;
    if (this.#buckets.size > PRUNE_AT) this.#prune(now, size);
  }

  /**
   * Charges `bytes` already received to `client` even past its share (the bucket goes into debt,
   * at most one burst deep) and says in how many ms the debt is paid: 0 when there is none. A
   * stream reads no more of that client until then, so its share holds by back-pressure on the
   * socket instead of refusing a message it has already read.
   */
  debit(client: string | undefined, bytes: number, now = Date.now()): number {
    if (this.perSecond === 0 || client === undefined) return 0;
    const size = this.#size();
    const bucket = this.#refilled(client, size, now);
    bucket.tokens = Math.max(-size, bucket.tokens - bytes);
    if (this.#buckets.size > PRUNE_AT) this.#prune(now, size);
    return bucket.tokens >= 0 ? 0 : Math.ceil((-bucket.tokens / this.perSecond) * 1000);
  }

  /** `client`'s bucket (kept), with what it regained since it was last charged. */
  #refilled(client: string, size: number, now: number): Bucket {
    let bucket = this.#buckets.get(client);
    if (!bucket) this.#buckets.set(client, (bucket = { tokens: size, at: now }));
    bucket.tokens = Math.min(size, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    return bucket;
  }

  #size(): number {
    return Math.max(this.largestBody, this.perSecond * this.burstSeconds);
  }

  #prune(now: number, size: number): void {
    for (const [client, b] of this.#buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= size) this.#buckets.delete(client);
    }
  }
}
