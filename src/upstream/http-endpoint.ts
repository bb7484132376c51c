import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { Pool, type Dispatcher } from 'undici';
import type { HttpUpstreamConfig } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { ExchangeFailure } from './retry-policy.js';

/** A message (or an error page) larger than this is a broken upstream, not something to buffer. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Node and undici error codes that mean no connection was made: the request never left. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

export type ResponseBody = Dispatcher.ResponseData['body'];

export interface EndpointRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface EndpointResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
}

/**
 * The HTTP side of one remote upstream, shared by all its workers: one undici connection pool
 * to its origin (keep-alive), its configured headers and its circuit breaker. undici's own
 * timeouts are off: its bodyTimeout would kill quiet SSE streams and its headersTimeout a slow
 * JSON reply, so callers keep idle timers of their own; only connecting has a deadline here.
 */
export class HttpEndpoint {
  readonly url: URL;
  readonly breaker: CircuitBreaker;
  readonly #pool: Pool;

  constructor(
    readonly config: HttpUpstreamConfig,
    readonly log: Logger,
    readonly metrics: Metrics,
  ) {
    this.url = new URL(config.url);
    this.breaker = new CircuitBreaker(config.name, config.breaker);
    this.#pool = new Pool(this.url.origin, {
      connect: { timeout: config.connectTimeoutMs },
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  get name(): string {
    return this.config.name;
  }

  /**
   * One HTTP exchange, refused at once while the circuit is open. A failure to connect or a
   * broken connection is thrown as an ExchangeFailure and counted by the breaker; an abort by
   * `signal` rethrows its reason. What the answer means is the caller's to judge (and report).
   */
  async request(req: EndpointRequest): Promise<EndpointResponse> {
    if (req.url.origin !== this.url.origin) throw new ExchangeFailure('protocol', `refusing to send to another origin (${req.url.origin})`);
    this.breaker.check();
    try {
      const res = await this.#pool.request({
        method: req.method,
        path: req.url.pathname + req.url.search,
        headers: { ...this.config.headers, ...req.headers },
        body: req.body ?? null,
        signal: req.signal,
      });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      if (req.signal.aborted) throw req.signal.reason;
      const failure = classify(err);
      this.breaker.failure(failure.message);
      throw failure;
    }
  }

  /** Ends every connection at once: open SSE streams would keep a graceful close waiting. */
  async close(): Promise<void> {
    this.breaker.close();
    await this.#pool.destroy().catch(() => undefined);
  }
}

function classify(err: unknown): ExchangeFailure {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && CONNECT_CODES.has(code)) return new ExchangeFailure('connect', `cannot connect (${code}: ${message})`);
  // HPE_*: what came back is not HTTP at all.
  if (typeof code === 'string' && code.startsWith('HPE_')) return new ExchangeFailure('protocol', `answered with something that is not HTTP (${code})`);
  return new ExchangeFailure('sent', `connection failed (${typeof code === 'string' ? `${code}: ` : ''}${message})`);
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The media type, lower case, without parameters. */
export function mediaType(headers: IncomingHttpHeaders): string {
  return (headerValue(headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Retry-After in ms (seconds or an HTTP date), capped; undefined when absent or unreadable. */
export function retryAfterMs(headers: IncomingHttpHeaders, capMs = 60_000): number | undefined {
  const v = headerValue(headers, 'retry-after');
  if (!v) return undefined;
  const seconds = Number(v);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(v) - Date.now();
  return Number.isFinite(ms) ? Math.min(capMs, Math.max(0, Math.round(ms))) : undefined;
}

/** Reads a whole body as text, failing past `limit` bytes instead of buffering without end. */
export async function readText(body: ResponseBody, limit = MAX_MESSAGE_BYTES, onChunk?: () => void): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    onChunk?.();
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new ExchangeFailure('protocol', `answer larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The start of an error body, for a message: never the whole of a large page. */
export async function snippet(body: ResponseBody): Promise<string> {
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size > 2048) {
        body.destroy();
        break;
      }
    }
    return Buffer.concat(chunks).toString('utf8').slice(0, 300).replace(/\s+/g, ' ').trim();
  } catch {
    return '';
  }
}
