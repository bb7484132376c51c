import type { Logger } from 'pino';
import { GatewayError } from '../../jsonrpc/errors.js';
import type { JsonRpcMessage } from '../../jsonrpc/messages.js';
import { Abort } from '../../timing/abort.js';
import { Backoff, sleep } from '../../timing/backoff.js';
import type { CallerAuth, HttpEndpoint } from './http-endpoint.js';
import { CallersInFlight, Cancelled, exchange, failureOf, sentCall, type Outcome } from './http-exchange.js';
import { ListenStream } from './http-get-stream.js';
import { INITIALIZE, INITIALIZED } from '../connection/initialize.js';
import { BaseUpstream } from '../connection/base-upstream.js';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';
import { isRetryable } from '../connection/retry-policy.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamCall,
  UpstreamPeer,
  UpstreamServerInfo,
  UpstreamSessionMemory,
} from '../../contracts/upstream.js';

const DELETE_TIMEOUT_MS = 2000;

export interface HttpUpstreamOptions {
  endpoint: HttpEndpoint;
  identity: ClientIdentity;
  log: Logger;
  index: number | string;
  peer: UpstreamPeer;
  /** Open the GET stream for the upstream's own messages (off for the health probe). */
  listen?: boolean;
  /** Continue a remembered upstream session instead of initializing (per-session workers). */
  memory?: UpstreamSessionMemory;
}

/**
 * One upstream MCP session over Streamable HTTP (2025-03-26 … 2025-11-25): a "worker" of the
 * pool. Every outgoing message is a POST; what comes back (a JSON body, or the events of an
 * SSE reply) goes into the same JsonRpcConnection stdio uses, so id and progress-token
 * remapping, server-to-client requests and notifications work alike for both. A 404 for the
 * session re-initializes it once (one re-initialization for all calls that hit it) and sends
 * again what the upstream had not started.
 */
export class HttpUpstream extends BaseUpstream {
  readonly #endpoint: HttpEndpoint;
  readonly #aborts = new Map<number, Abort>();
  /** Calls made for a user, by our id: each of their exchanges goes as that user. */
  readonly #callers = new CallersInFlight();
  /** The caller of the call being sent now (connection.call sends before it returns the id). */
  #sending: CallerAuth | undefined;
  /** A per-session worker of an upstream that acts for users: everything it sends goes as its user. */
  #owner: CallerAuth | undefined;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  /** An initialize reply's Mcp-Session-Id (one function, not one per exchange). */
  readonly #onSessionId = (sessionId: string | undefined): void => {
    this.#sessionId = sessionId;
  };
  /** Counts (re)initializations: an exchange that saw a 404 under an older one just sends again. */
  #generation = 0;
  #reinit: Promise<void> | undefined;
  #stream: ListenStream | undefined;
  #closed = false;
  #exited = false;

  constructor(private readonly options: HttpUpstreamOptions) {
    super(`${options.endpoint.name}#${options.index}`, options.peer, options.log);
    this.#endpoint = options.endpoint;
  }

  /** The upstream's Mcp-Session-Id (undefined for a server without sessions). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  async start(): Promise<UpstreamServerInfo> {
    try {
      this.#owner = ownerOf(this.#endpoint, this.options.identity);
      this.serverInfo = (await this.#resume()) ?? (await this.#initialize());
    } catch (err) {
      await this.close();
      throw err;
    }
    this.#openStream();
    this.options.log.info(
      {
        upstream: this.label,
        server: this.serverInfo.serverInfo,
        version: this.serverInfo.protocolVersion,
        session: this.#sessionId,
      },
      'upstream ready',
    );
    return this.serverInfo;
  }

  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall {
    const { refused, auth } = this.#endpoint.admit(options?.caller);
    if (refused) return refused;
    // The user's newest token serves what the worker sends for nobody in particular (its stream, its DELETE).
    if (auth && this.#owner?.caller.principal === auth.caller.principal) this.#owner = auth;
    this.#sending = auth;
    let call;
    try {
      call = this.connection.call(method, params, options);
    } finally {
      this.#sending = undefined;
    }
    return sentCall(call, auth, this.#callers, this.#aborts, (error) => call.cancel(error));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop(new GatewayError('UPSTREAM_UNAVAILABLE', `${this.label} is shutting down`));
    if (this.#sessionId === undefined || this.#exited) return;
    // Settled before close() is: a worker started after this one must not find this session recorded.
    const forgotten = this.options.memory?.remember(undefined);
    // Ends the session upstream; a server that cannot be reached or refuses is no reason to wait.
    const abort = new Abort();
    const timer = setTimeout(() => abort.abort(), DELETE_TIMEOUT_MS);
    try {
      const res = await this.#endpoint.request({
        method: 'DELETE',
        url: this.#endpoint.url,
        headers: this.#sessionHeaders(),
        abort,
        ...(this.#owner ? { caller: this.#owner } : {}),
      });
      await res.body.dump();
    } catch {
      /* ignored */
    } finally {
      clearTimeout(timer);
    }
    await forgotten;
  }

  #stop(error: GatewayError): void {
    this.#stream?.stop();
    this.connection.close(error);
    for (const abort of this.#aborts.values()) abort.abort(new Cancelled(error));
  }

  /** The session is gone for good (re-initializing failed): the pool starts another worker. */
  #die(reason: string): void {
    if (this.#exited || this.#closed) return;
    this.#exited = true;
    this.#stop(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.label} ${reason}`));
    this.options.log.warn({ upstream: this.label, reason }, 'upstream session lost');
    this.emitExit(reason);
  }

  /** The session another replica's worker left behind, if any: used as it is (a 404 later re-initializes). */
  async #resume(): Promise<UpstreamServerInfo | undefined> {
    const saved = await this.options.memory?.recall().catch(() => undefined);
    if (!saved) return undefined;
    this.#sessionId = saved.sessionId;
    this.#protocolVersion = saved.info.protocolVersion;
    this.options.log.info(
      { upstream: this.label, session: saved.sessionId },
      'continuing the upstream session of a worker that ran on another replica',
    );
    return saved.info;
  }

  async #initialize(): Promise<UpstreamServerInfo> {
    const info = await this.handshake(this.options.identity, this.#endpoint.config.timeoutMs, {
      accepted: (answered) => {
        this.#protocolVersion = answered.protocolVersion;
        this.#generation++;
      },
      // Awaited, so nothing else reaches the new session before it knows it is initialized.
      notify: (method) => this.#deliver({ jsonrpc: '2.0', method }),
    });
    if (this.#exited)
      throw new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.label} lost its session during initialization`);
    if (this.#sessionId !== undefined) void this.options.memory?.remember({ sessionId: this.#sessionId, info });
    return info;
  }

  /** One re-initialization for every exchange that found the session gone (singleflight). */
  async #reinitialize(seenGeneration: number): Promise<void> {
    if (this.#generation !== seenGeneration) return this.#reinit;
    this.#reinit ??= (async () => {
      this.options.log.warn(
        { upstream: this.label, session: this.#sessionId },
        'upstream session expired; initializing a new one',
      );
      this.#stream?.stop();
      this.#stream = undefined;
      this.#sessionId = undefined;
      try {
        this.serverInfo = await this.#initialize();
      } catch (err) {
        this.#die(`lost its session and could not start another (${err instanceof Error ? err.message : String(err)})`);
        throw err;
      }
      this.#openStream();
    })().finally(() => {
      this.#reinit = undefined;
    });
    return this.#reinit;
  }

  #openStream(): void {
    const caps = this.serverInfo?.capabilities ?? {};
    const wants = (c: unknown, key: string) =>
      typeof c === 'object' && c !== null && (c as Record<string, unknown>)[key] === true;
    const useful =
      wants(caps.tools, 'listChanged') ||
      wants(caps.prompts, 'listChanged') ||
      wants(caps.resources, 'listChanged') ||
      wants(caps.resources, 'subscribe') ||
      caps.logging !== undefined;
    if (this.options.listen === false || !useful || this.#closed || this.#exited) return;
    const generation = this.#generation;
    this.#stream = new ListenStream({
      label: this.label,
      endpoint: this.#endpoint,
      headers: () => this.#sessionHeaders(),
      onMessage: (m) => this.connection.receive(m),
      onSessionLost: () => void this.#reinitialize(generation).catch(() => undefined),
      log: this.options.log,
      caller: () => this.#owner,
    });
    this.#stream.start();
  }

  protected send(message: JsonRpcMessage): void {
    if (this.#sending !== undefined && 'method' in message && 'id' in message && typeof message.id === 'number')
      this.#callers.set(message.id, this.#sending);
    this.#deliver(message).catch((err: unknown) =>
      this.options.log.error({ upstream: this.label, err }, 'unexpected error sending to upstream'),
    );
  }

  #sessionHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.#sessionId !== undefined) headers['mcp-session-id'] = this.#sessionId;
    if (this.#protocolVersion !== undefined) headers['mcp-protocol-version'] = this.#protocolVersion;
    return headers;
  }

  /**
   * Sends one message until it is delivered, retried as the retry policy allows, or failed:
   * a request's failure rejects its call with a typed gateway error.
   */
  async #deliver(message: JsonRpcMessage): Promise<void> {
    const method = 'method' in message ? message.method : undefined;
    const id = method !== undefined && 'id' in message && typeof message.id === 'number' ? message.id : undefined;
    const { retry } = this.#endpoint.config;
    const backoff = new Backoff({ initialMs: retry.initialDelayMs, maxMs: retry.maxDelayMs });
    let retries = 0;
    let resumes = 0;
    let resendAfterReinit = true;
    let resumeFrom: string | undefined;
    for (;;) {
      if ((id !== undefined && !this.connection.has(id)) || this.#closed || this.#exited) return;
      let outcome: Outcome;
      try {
        // A new session must be initialized before anything but its own handshake reaches it.
        if (method !== INITIALIZE && method !== INITIALIZED && this.#reinit) await this.#reinit;
        outcome = await this.#exchange(message, id, method, resumeFrom);
      } catch (err) {
        outcome = { kind: 'failed', failure: failureOf(err) };
      }
      resumeFrom = undefined;
      if (outcome.kind === 'done') return;
      if (outcome.kind === 'session-lost') {
        // Gone again right after a new initialize (or during its handshake): it will not hold one.
        if (!resendAfterReinit || method === INITIALIZED) {
          this.#die('lost its new session at once');
          return;
        }
        resendAfterReinit = false;
        try {
          await this.#reinitialize(outcome.generation);
        } catch {
          return; // #die failed every call, this one included
        }
        // What the old session was told (a cancellation, an answer) means nothing to the new one.
        if (id === undefined) return;
        continue;
      }
      if (outcome.kind === 'cut') {
        if (outcome.progressed) resumes = 0;
        // The server closed the reply stream but named its events: resume it with a GET.
        if (outcome.lastEventId !== undefined && resumes < Math.max(1, retry.attempts)) {
          resumes++;
          resumeFrom = outcome.lastEventId;
          this.#endpoint.diagnostics.emit('upstream:retry', { upstream: this.#endpoint.name, reason: 'resume' });
          await sleep(outcome.retryMs ?? backoff.next());
          continue;
        }
        const failure = new ExchangeFailure('cut', 'closed the stream before answering');
        this.#endpoint.breaker.failure(failure.message);
        outcome = { kind: 'failed', failure };
      }
      const { failure } = outcome;
      if (failure instanceof ExchangeFailure && retries < retry.attempts && isRetryable(method, failure)) {
        retries++;
        this.#endpoint.diagnostics.emit('upstream:retry', { upstream: this.#endpoint.name, reason: failure.kind });
        await sleep(Math.max(failure.retryAfterMs ?? 0, backoff.next()));
        continue;
      }
      const error = failure instanceof ExchangeFailure ? failure.toGatewayError(this.#endpoint.name) : failure;
      if (id === undefined) {
        this.options.log.debug(
          { upstream: this.label, method, err: error.message },
          'message to upstream not delivered',
        );
        return;
      }
      // The upstream may still be working on a request it received: tell it we gave up.
      const received = failure instanceof ExchangeFailure && failure.kind !== 'connect' && failure.kind !== 'status';
      if (received) this.connection.cancel(id, error);
      else this.connection.fail(id, error);
      return;
    }
  }

  /** One exchange for `message`, cancellable through #aborts while it runs. */
  async #exchange(
    message: JsonRpcMessage,
    id: number | undefined,
    method: string | undefined,
    resumeFrom: string | undefined,
  ): Promise<Outcome> {
    const abort = new Abort();
    if (id !== undefined) this.#aborts.set(id, abort);
    try {
      return await exchange({
        endpoint: this.#endpoint,
        connection: this.connection,
        message,
        id,
        method,
        sessionHeaders: method === INITIALIZE ? {} : this.#sessionHeaders(),
        caller: (id === undefined ? undefined : this.#callers.get(id)) ?? this.#owner,
        generation: this.#generation,
        resumeFrom,
        abort,
        onSessionId: this.#onSessionId,
      });
    } finally {
      if (id !== undefined && this.#aborts.get(id) === abort) this.#aborts.delete(id);
    }
  }
}

/**
 * The user a per-session worker goes as, when its upstream acts for users. A worker for a user
 * whose token this replica does not hold (started by a call forwarded from another replica)
 * does not start: it would otherwise go as the gateway.
 */
function ownerOf(endpoint: HttpEndpoint, identity: ClientIdentity): CallerAuth | undefined {
  if (!identity.forUser || !endpoint.actsForUsers) return undefined;
  if (!identity.caller)
    throw new GatewayError(
      'UPSTREAM_UNAVAILABLE',
      `Upstream ${endpoint.name}: this session's worker must be opened on the replica its call came to (the ` +
        `user's token stays there); retry`,
      { retryAfterMs: 1000 },
    );
  return endpoint.forCaller(identity.caller);
}
