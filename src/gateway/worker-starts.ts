import { GatewayError } from '../jsonrpc/errors.js';

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (epoch ms). */
  at: number;
}

const MINUTE_MS = 60_000;
/** Past this many clients, buckets that have refilled are dropped (a full one says nothing). */
const SWEEP_AT = 1024;

/**
 * Per-session workers started per client on this replica (limits.workerStartsPerMinute): a
 * bucket of that many starts, refilled at that many a minute. A worker is a process (or an
 * upstream session): a client that opens session after session, or a stateless client whose
 * every request gets a worker of its own, would otherwise turn its request rate into process
 * starts, and at pool.max evict other clients' workers to make room for its own.
 */
export class WorkerStarts {
  readonly #buckets = new Map<string, Bucket>();
  #swept = 0;

  /** `perMinute` 0: no limit. */
  constructor(private readonly perMinute: number) {}

  /** Why `client` may not start a worker now (undefined: it may); undefined clients are not limited. */
  refusal(client: string | undefined, now = Date.now()): GatewayError | undefined {
    if (this.perMinute === 0 || client === undefined) return undefined;
    const tokens = this.#tokens(client, now);
    if (tokens >= 1) return undefined;
    const retryAfterMs = Math.ceil(((1 - tokens) * MINUTE_MS) / this.perMinute);
    return new GatewayError(
      'WORKER_START_LIMIT',
      `This client has used its ${this.perMinute} per-session worker starts a minute (limits.workerStartsPerMinute)`,
      {
        retryAfterMs,
      },
    );
  }

  /** `client` started a worker. */
  spend(client: string | undefined, now = Date.now()): void {
    if (this.perMinute === 0 || client === undefined) return;
    this.#buckets.set(client, { tokens: this.#tokens(client, now) - 1, at: now });
    if (this.#buckets.size > SWEEP_AT && now - this.#swept > MINUTE_MS) this.#sweep(now);
  }

  #tokens(client: string, now: number): number {
    const bucket = this.#buckets.get(client);
    if (!bucket) return this.perMinute;
    return Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / MINUTE_MS);
  }

  #sweep(now: number): void {
    this.#swept = now;
    for (const client of [...this.#buckets.keys()])
      if (this.#tokens(client, now) >= this.perMinute) this.#buckets.delete(client);
  }
}
