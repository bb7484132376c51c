import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { Pool, type Dispatcher } from 'undici';
import type { HttpUpstreamConfig } from '../../config/schema.js';
import { tlsConnectOptions } from '../../config/tls-files.js';
import type { DataPathEvents } from '../../observability/events.js';
import type { Abort } from '../../timing/abort.js';
import { GatewayError } from '../../jsonrpc/errors.js';
import { CircuitBreaker } from '../connection/circuit-breaker.js';
import { ClientCredentials } from '../../upstream-auth/client-credentials.js';
import { ClaimHeaders } from '../../upstream-auth/claim-headers.js';
import { TokenExchange, identityRefused } from '../../upstream-auth/token-exchange.js';
import { AuthorizationCode } from '../../upstream-auth/authorization-code.js';
import type { Caller } from '../../contracts/request-context.js';
import type { TokenStore } from '../../contracts/token-store.js';
import type { UpstreamCall } from '../../contracts/upstream.js';
import { failedCall } from '../../contracts/deferred-call.js';
import { ResponseBody } from './response-body.js';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';

/** Node and undici error codes that mean no connection was made: the request never left. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)/;

export interface EndpointRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  abort: Abort;
  /** A call made for a user (see HttpEndpoint.forCaller): sent with their token and claim headers. */
  caller?: CallerAuth;
}

/** What one user's calls carry, settled before the call is sent (a bad claim fails it there). */
export interface CallerAuth {
  caller: Caller;
  headers: Record<string, string>;
}

/** A call refused before it was sent, or what it carries (no user's: undefined). */
export type CallAdmission =
  { refused: UpstreamCall; auth?: undefined } | { refused?: undefined; auth: CallerAuth | undefined };

const AS_NOBODY: CallAdmission = { auth: undefined };

/** A grant that gets each user a token of their own (token-exchange, authorization-code). */
interface UserTokens {
  authorization(caller: Caller): Promise<string>;
  invalidate(caller: Caller, authorization: string): Promise<void>;
}

/** What an endpoint is given besides its config: where the tokens it obtains for users are held. */
export interface EndpointIdentityOptions {
  tokens?: TokenStore;
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
  readonly #path: string;
  readonly #hasHeaders: boolean;
  /**
   * The gateway's own token: every call (client-credentials), or only calls for no user (token-exchange, discovery
   * gateway).
   */
  readonly #credentials: ClientCredentials | undefined;
  readonly #userTokens: UserTokens | undefined;
  readonly #headers: ClaimHeaders;

  constructor(
    readonly config: HttpUpstreamConfig,
    readonly log: Logger,
    readonly diagnostics: DataPathEvents,
    identity: EndpointIdentityOptions = {},
  ) {
    this.url = new URL(config.url);
    this.#path = this.url.pathname + this.url.search;
    this.#headers = new ClaimHeaders(config.headers);
    this.#hasHeaders = Object.keys(this.#headers.fixed).length > 0;
    const oauth = config.oauth;
    const perUser = oauth?.grant === 'token-exchange' || oauth?.grant === 'authorization-code';
    this.#credentials =
      oauth && (!perUser || config.discovery !== 'anonymous') ? new ClientCredentials(oauth) : undefined;
    this.#userTokens = oauth && perUser ? userTokens(config.name, oauth, identity.tokens) : undefined;
    this.breaker = new CircuitBreaker(config.name, config.breaker);
    this.#pool = new Pool(this.url.origin, {
      connect: { timeout: config.connectTimeoutMs, ...tlsConnectOptions(config.tls) },
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  get name(): string {
    return this.config.name;
  }

  /** Whether calls for users go as those users (a token exchange, headers from their claims). */
  get actsForUsers(): boolean {
    return this.#userTokens !== undefined || this.#headers.any;
  }

  /** What `caller`'s calls carry; throws CLAIM_HEADER_INVALID for a claim that cannot be sent. */
  forCaller(caller: Caller): CallerAuth {
    return { caller, headers: this.#headers.resolve(caller) };
  }

  /**
   * Whether a call may be sent, and as whom: while the circuit is open, its refusal (counted); else,
   * for a user's call where calls go as their users, what it carries (a claim that cannot be sent
   * refuses the call here). Every HTTP wire starts a call with it.
   */
  admit(caller: Caller | undefined): CallAdmission {
    if (this.breaker.state === 'open') {
      this.diagnostics.emit('pool:rejection', { upstream: this.name, reason: 'circuit_open' });
      return { refused: failedCall(this.breaker.openError()) };
    }
    if (caller === undefined || !this.actsForUsers) return AS_NOBODY;
    try {
      return { auth: this.forCaller(caller) };
    } catch (err) {
      return { refused: failedCall(err as Error) };
    }
  }

  /**
   * One HTTP exchange, refused at once while the circuit is open. A failure to connect or a
   * broken connection is thrown as an ExchangeFailure and counted by the breaker; an abort
   * rejects with (and fails a body being read with) the abort's reason. What the answer means
   * is the caller's to judge (and report).
   */
  request(req: EndpointRequest): Promise<EndpointResponse> {
    if (req.url.origin !== this.url.origin)
      return Promise.reject(new ExchangeFailure('protocol', `refusing to send to another origin (${req.url.origin})`));
    try {
      this.breaker.check();
    } catch (err) {
      return Promise.reject(err);
    }
    if (req.caller && this.#userTokens) return this.#asUser(req, req.caller, this.#userTokens);
    const extra = req.caller?.headers;
    const sent = this.#credentials
      ? this.#authorized(req, this.#credentials, extra)
      : this.#exchange(req, undefined, extra);
    return this.config.mode === 'per-session' && this.#userTokens && !req.caller
      ? sent.then((res) => this.#forNobody(res))
      : sent;
  }

  /**
   * A per-session upstream with a per-user grant that refuses the gateway's own discovery (it
   * lists only per user): it is there, it just is not the gateway's. A typed refusal, kept from
   * the breaker and taken by health checks as an answer; the catalog comes from a user's worker.
   */
  async #forNobody(res: EndpointResponse): Promise<EndpointResponse> {
    if (res.status !== 401 && res.status !== 403) return res;
    await res.body.dump();
    const reason = `upstream answered HTTP ${res.status} to the gateway's own discovery`;
    throw new GatewayError(
      'UPSTREAM_IDENTITY_REFUSED',
      `Upstream ${this.name} serves its users only (${reason}): its lists come from a user's worker`,
      { upstream: this.name, reason },
    );
  }

  /**
   * With the user's exchanged token. The upstream's 401 gets one new exchange and one more try;
   * a 401 or 403 after that refuses this user, not the upstream: UPSTREAM_IDENTITY_REFUSED, kept
   * from the breaker, so one user's refusals never open the circuit for the others.
   */
  async #asUser(req: EndpointRequest, auth: CallerAuth, tokens: UserTokens): Promise<EndpointResponse> {
    const token = async () => {
      try {
        return await tokens.authorization(auth.caller);
      } catch (err) {
        if (err instanceof ExchangeFailure) this.breaker.failure(err.message);
        throw err;
      }
    };
    let authorization = await token();
    let res = await this.#exchange(req, authorization, auth.headers);
    if (res.status === 401) {
      await res.body.dump();
      await tokens.invalidate(auth.caller, authorization);
      authorization = await token();
      res = await this.#exchange(req, authorization, auth.headers);
    }
    if (res.status !== 401 && res.status !== 403) return res;
    await res.body.dump();
    if (res.status === 401) await tokens.invalidate(auth.caller, authorization);
    throw identityRefused(this.name, `upstream answered HTTP ${res.status}`);
  }

  /**
   * With the gateway's own token. A 401 means the upstream no longer takes it (revoked, keys
   * rotated): one new token, one more try; a second 401 is the caller's to report.
   */
  async #authorized(
    req: EndpointRequest,
    credentials: ClientCredentials,
    extra?: Record<string, string>,
  ): Promise<EndpointResponse> {
    const token = async () => {
      try {
        return await credentials.authorization();
      } catch (err) {
        if (err instanceof ExchangeFailure) this.breaker.failure(err.message);
        throw err;
      }
    };
    const first = await token();
    const res = await this.#exchange(req, first, extra);
    if (res.status !== 401) return res;
    await res.body.dump();
    credentials.invalidate(first);
    return this.#exchange(req, await token(), extra);
  }

  #exchange(req: EndpointRequest, authorization?: string, extra?: Record<string, string>): Promise<EndpointResponse> {
    return new Promise((resolve, reject) => {
      const handler = new ExchangeHandler(req.abort, resolve, (err) => {
        if (req.abort.aborted) return reject(req.abort.reason);
        const failure = classify(err);
        this.breaker.failure(failure.message);
        reject(failure);
      });
      let headers = this.#hasHeaders ? { ...this.#headers.fixed, ...req.headers } : req.headers;
      if (extra !== undefined) headers = { ...headers, ...extra };
      if (authorization !== undefined) headers = { ...headers, authorization };
      const path = req.url === this.url ? this.#path : req.url.pathname + req.url.search;
      this.#pool.dispatch({ method: req.method, path, headers, body: req.body ?? null }, handler);
    });
  }

  /** Ends every connection at once: open SSE streams would keep a graceful close waiting. */
  async close(): Promise<void> {
    this.breaker.close();
    await this.#pool.destroy().catch(() => undefined);
  }
}

/**
 * undici's dispatch API, not its request(): request() wraps every response in a Readable, and
 * that stream, its async iteration and an AbortSignal cost ~70 µs of CPU per upstream call
 * against ~25 µs this way (measured side by side on loopback).
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #body: ResponseBody | undefined;
  #settled = false;
  readonly #unlisten: () => void;

  constructor(
    private readonly abort: Abort,
    private readonly resolve: (res: EndpointResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.#unlisten = abort.listen((reason) => {
      if (this.#controller) this.#controller.abort(reason instanceof Error ? reason : new Error('aborted'));
      // Still queued for a connection: the caller hears now, undici when it gets one.
      else this.#fail(reason);
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.abort.aborted) controller.abort(new Error('aborted'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#body = new ResponseBody(controller);
    this.resolve({ status: statusCode, headers, body: this.#body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#body?.push(chunk);
  }

  onResponseEnd(): void {
    this.#unlisten();
    this.#body?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#fail(err);
  }

  #fail(err: unknown): void {
    this.#unlisten();
    const reason = this.abort.aborted ? this.abort.reason : err;
    if (this.#body) this.#body.fail(reason);
    else if (!this.#settled) {
      this.#settled = true;
      this.reject(reason);
    }
  }
}

function userTokens(
  upstream: string,
  oauth: NonNullable<HttpUpstreamConfig['oauth']>,
  tokens: TokenStore | undefined,
): UserTokens {
  if (oauth.grant === 'token-exchange') return new TokenExchange(upstream, oauth, tokens);
  // (The gateway makes a store whenever an upstream has this grant: stores.ts.)
  if (!tokens) throw new Error(`upstream ${upstream}: grant authorization-code needs a token store`);
  return new AuthorizationCode(upstream, oauth, tokens);
}

function classify(err: unknown): ExchangeFailure {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && CONNECT_CODES.has(code))
    return new ExchangeFailure('connect', `cannot connect (${code}: ${message})`);
  // A failed TLS handshake (certificate not trusted, wrong name, client certificate refused):
  // no request reached the upstream.
  if (typeof code === 'string' && TLS_CODE.test(code))
    return new ExchangeFailure('connect', `TLS handshake failed (${code}: ${message})`);
  // HPE_*: what came back is not HTTP at all.
  if (typeof code === 'string' && code.startsWith('HPE_'))
    return new ExchangeFailure('protocol', `answered with something that is not HTTP (${code})`);
  return new ExchangeFailure('sent', `connection failed (${typeof code === 'string' ? `${code}: ` : ''}${message})`);
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The media type, lower case, without parameters. */
export function mediaType(headers: IncomingHttpHeaders): string {
  const value = headerValue(headers, 'content-type') ?? '';
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/** Retry-After in ms (seconds or an HTTP date), capped; undefined when absent or unreadable. */
export function retryAfterMs(headers: IncomingHttpHeaders, capMs = 60_000): number | undefined {
  const v = headerValue(headers, 'retry-after');
  if (!v) return undefined;
  const seconds = Number(v);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(v) - Date.now();
  return Number.isFinite(ms) ? Math.min(capMs, Math.max(0, Math.round(ms))) : undefined;
}
