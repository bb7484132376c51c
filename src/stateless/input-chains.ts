import { createHash, randomUUID } from 'node:crypto';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { failedCall } from '../contracts/deferred-call.js';
import type { CallOptions, McpResult, UpstreamCall } from '../contracts/upstream.js';
import type { RequestContext } from '../contracts/request-context.js';
import { SignedTokens, peekSignedToken } from '../contracts/signed-token.js';

/** What 2026-07-28 lets answer with an input-required result. */
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** Requests an upstream may send its client, and the client capability each needs. */
export const CLIENT_CAPABILITY: ReadonlyMap<string, string> = new Map([
  ['sampling/createMessage', 'sampling'],
  ['elicitation/create', 'elicitation'],
  ['roots/list', 'roots'],
]);

const CHAIN_PREFIX = '~chain.';
/** What a chain's requestState is signed as: no other signed token verifies as one. */
const STATE_PURPOSE = 'requestState/chain';

/** A scope for a new chain: a stateless request to a per-session upstream, and its retries. */
export function newChainScope(): string {
  return CHAIN_PREFIX + randomUUID();
}

export function isChainScope(scope: string): boolean {
  return scope.startsWith(CHAIN_PREFIX);
}

interface StatePayload {
  /** The chain's scope. */
  s: string;
  /** The method and the name (or URI) the chain was started for. */
  m: string;
  d: string;
  /** The round: a state from an earlier round is stale. */
  n: number;
}

/** The chain scope a requestState names, unverified: the replica running the chain verifies it. */
export function chainScopeOf(requestState: unknown): string | undefined {
  if (typeof requestState !== 'string') return undefined;
  const payload = peekSignedToken(requestState);
  if (!isObject(payload)) return undefined;
  return typeof payload.s === 'string' && isChainScope(payload.s) ? payload.s : undefined;
}

/** What identifies the target of a request: a retry must name the same one. */
function targetDigest(method: string, params: Record<string, unknown> | undefined): string {
  const target = method === 'resources/read' ? params?.uri : params?.name;
  return createHash('sha256')
    .update(`${method}\u0000${String(target)}`)
    .digest('base64url')
    .slice(0, 22);
}

/** One client request waiting for the chain's next outcome: a result, an error, or more input. */
interface Round {
  resolve(result: McpResult): void;
  reject(error: Error): void;
  options: CallOptions | undefined;
  /** The progress token of this request: progress of the continuing call is renamed to it. */
  progressToken: unknown;
}

export interface ChainHost {
  /** Sends an upstream's request towards the client: `deliver` gets it under its gateway id; `signal` withdraws it. */
  ask(
    scope: string,
    deliver: (message: JsonRpcMessage) => boolean,
    method: string,
    params: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<McpResult>;
  /** Hands the client's answer to the request with that id. */
  answer(scope: string, response: JsonRpcResponse): void;
  /** The chain ended: its worker and its ownership go. */
  release(scope: string): void;
  /** The chain answered input_required and waits for the retry (true), or the retry came (false). */
  yielded(scope: string, yielded: boolean): void;
}

class Chain {
  round: Round | undefined;
  roundNumber = 0;
  call: UpstreamCall | undefined;
  /** Requests of the upstream the client has yet to answer, by gateway id. */
  readonly outstanding = new Map<string, { method: string; params?: Record<string, unknown> }>();
  /** The call's end, while no client request is there to take it. */
  outcome: { result: McpResult } | { error: Error } | undefined;
  expiry: NodeJS.Timeout | undefined;
  yieldScheduled = false;
  /** RequestContext.inputGatherMs of the request that started it. */
  gatherMs = YIELD_MS;
  /** What the latest request of the chain declared: asks between rounds are judged by it too. */
  capabilities: Readonly<Record<string, unknown>> = {};

  constructor(
    readonly scope: string,
    readonly method: string,
    readonly digest: string,
    /** With auth on: who started it; only they may continue it. */
    readonly principal: string | undefined,
  ) {}
}

/**
 * Server-to-client requests for stateless (2026-07-28) clients, who take none: a stateless
 * request to a per-session upstream runs on a worker of its own (a chain), and when that
 * worker asks its client something (sampling, elicitation, roots), the request is answered
 * with an input-required result naming what was asked and a signed requestState. The client's
 * retry with `inputResponses` hands the answers to the worker, which is still running the
 * same call, and waits for what comes next: the result, or another round.
 *
 * The worker and its call live on the replica that started the chain; a retry reaching another
 * replica is forwarded there like any per-session call. requestState is signed with a key of
 * that replica and bound to the chain, the round, the method and its target; with auth on, only
 * the principal that started a chain may continue it.
 */
const YIELD_MS = 10;

export class InputChains {
  readonly #chains = new Map<string, Chain>();
  /** A key of this replica: the chain and its worker live here, and a retry is forwarded here. */
  readonly #tokens = new SignedTokens();

  constructor(
    private readonly host: ChainHost,
    /** How long a chain waits for the client's retry before its call is cancelled. */
    private readonly waitMs: number,
  ) {}

  get size(): number {
    return this.#chains.size;
  }

  /** Starts a chain: `start` runs the call on the scope's worker. */
  run(
    ctx: RequestContext,
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
    start: (options: CallOptions) => UpstreamCall,
  ): UpstreamCall {
    const chain = new Chain(ctx.scope, method, targetDigest(method, params), ctx.principal);
    chain.gatherMs = ctx.inputGatherMs ?? YIELD_MS;
    this.#chains.set(chain.scope, chain);
    const round = this.#open(chain, ctx, params, options);
    chain.call = start({ onNotification: (n) => this.#notify(chain, n) });
    chain.call.promise.then(
      (result) => this.#settle(chain, { result }),
      (error: unknown) => this.#settle(chain, { error: error instanceof Error ? error : new Error(String(error)) }),
    );
    return round;
  }

  /**
   * The chain's worker asks its client something; `signal`: the question is withdrawn (its call ended, the upstream
   * cancelled it).
   */
  ask(
    scope: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<McpResult> {
    const chain = this.#chains.get(scope);
    if (!chain)
      return Promise.reject(new GatewayError('UPSTREAM_UNAVAILABLE', 'The request this worker serves has ended'));
    if (!INPUT_REQUIRED_METHODS.has(chain.method)) {
      return Promise.reject(
        new GatewayError('METHOD_NOT_FOUND', `${method} cannot reach a stateless client during ${chain.method}`),
      );
    }
    const capability = CLIENT_CAPABILITY.get(method);
    if (capability === undefined || chain.capabilities[capability] === undefined) {
      // The spec's answer to the client: this request needs a capability it did not declare.
      const error = new GatewayError(
        'MISSING_CLIENT_CAPABILITY',
        `${chain.method} needs the client capability "${capability ?? method}"`,
        {
          requiredCapabilities: { [capability ?? method]: {} },
        },
      );
      chain.call?.cancel(error);
      return Promise.reject(
        new GatewayError('METHOD_NOT_FOUND', `The client did not declare the capability for ${method}`),
      );
    }
    let id: string | undefined;
    const deliver = (message: JsonRpcMessage) => {
      if ('id' in message && typeof message.id === 'string') id = message.id;
      return this.#collect(chain, message);
    };
    // Withdrawn, it is not asked again in the next round.
    signal?.addEventListener(
      'abort',
      () => {
        if (id !== undefined) chain.outstanding.delete(id);
      },
      { once: true },
    );
    return this.host.ask(scope, deliver, method, params, signal);
  }

  /** Ends every chain (shutdown). */
  closeAll(error: Error): void {
    for (const chain of [...this.#chains.values()]) this.#cancel(chain, error);
  }

  /** Continues the chain of the scope with a retry's `inputResponses` (a retry carries `requestState`). */
  resume(ctx: RequestContext, params: Record<string, unknown>, options: CallOptions | undefined): UpstreamCall {
    const chain = this.#chains.get(ctx.scope);
    const state = params.requestState;
    if (
      !chain ||
      typeof state !== 'string' ||
      chain.principal !== ctx.principal ||
      !this.#verify(chain, state, params)
    ) {
      // A retry for a chain that is not here claimed its scope on the way: let it go.
      if (!chain) this.host.release(ctx.scope);
      return failedCall(
        new GatewayError(
          'INVALID_PARAMS',
          'requestState is not valid: altered, from an earlier round, for another request, or expired',
        ),
      );
    }
    if (chain.round) return failedCall(new GatewayError('INVALID_REQUEST', 'This request is already being continued'));
    clearTimeout(chain.expiry);
    this.host.yielded(chain.scope, false);
    const round = this.#open(chain, ctx, params, options);
    const responses = isObject(params.inputResponses) ? params.inputResponses : {};
    for (const [id, value] of Object.entries(responses)) {
      // Keys we did not ask for are ignored, as the spec says.
      if (!chain.outstanding.has(id) || !isObject(value)) continue;
      chain.outstanding.delete(id);
      this.host.answer(chain.scope, { jsonrpc: '2.0', id, result: value });
    }
    if (chain.outcome) this.#settle(chain, chain.outcome);
    // Answers still missing: ask again, rather than fail.
    else if (chain.outstanding.size > 0) this.#scheduleYield(chain);
    return round;
  }

  #open(
    chain: Chain,
    ctx: RequestContext,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
  ): UpstreamCall {
    const meta = isObject(params?._meta) ? params._meta : {};
    chain.capabilities = ctx.clientCapabilities;
    const promise = new Promise<McpResult>((resolve, reject) => {
      chain.round = { resolve, reject, options, progressToken: meta.progressToken };
    });
    return { promise, cancel: (error) => this.#cancel(chain, error) };
  }

  #collect(chain: Chain, message: JsonRpcMessage): boolean {
    if (!('id' in message) || !('method' in message) || typeof message.id !== 'string') return false;
    chain.outstanding.set(
      message.id,
      message.params === undefined ? { method: message.method } : { method: message.method, params: message.params },
    );
    this.#scheduleYield(chain);
    return true;
  }

  /**
   * Requests that come together go out in one input-required result: together is within
   * YIELD_MS, as a worker's requests sent at once (two elicitations of one Promise.all) may
   * reach the gateway in two reads of its stdout. The round closes in the loop's check phase
   * after the timer: on a busy loop the timer can fire late, before that iteration's poll phase
   * has read a second request already waiting in the pipe; setImmediate lets it be read first.
   */
  #scheduleYield(chain: Chain): void {
    if (chain.yieldScheduled) return;
    chain.yieldScheduled = true;
    setTimeout(
      () =>
        setImmediate(() => {
          chain.yieldScheduled = false;
          const round = chain.round;
          if (!round || chain.outstanding.size === 0 || chain.outcome) return;
          chain.round = undefined;
          chain.roundNumber++;
          round.resolve({
            resultType: 'input_required',
            inputRequests: Object.fromEntries(chain.outstanding),
            requestState: this.#sign(chain),
          });
          chain.expiry = setTimeout(
            () =>
              this.#cancel(
                chain,
                new GatewayError('UPSTREAM_TIMEOUT', `No retry with the requested input within ${this.waitMs} ms`),
              ),
            this.waitMs,
          );
          chain.expiry.unref();
          // Its worker waits for a client that may never come back: under pressure, it makes room.
          this.host.yielded(chain.scope, true);
        }),
      chain.gatherMs,
    );
  }

  #notify(chain: Chain, n: JsonRpcNotification): void {
    const round = chain.round;
    const forward = round?.options?.onNotification;
    if (!forward) return;
    if (n.method === 'notifications/progress') {
      // Progress belongs to the request now waiting, under its own token (or not at all).
      if (round.progressToken === undefined) return;
      forward({ ...n, params: { ...n.params, progressToken: round.progressToken } });
      return;
    }
    forward(n);
  }

  #settle(chain: Chain, outcome: { result: McpResult } | { error: Error }): void {
    const round = chain.round;
    if (!round) {
      // Nobody is waiting: the next retry gets it, or the chain expires.
      chain.outcome = outcome;
      return;
    }
    chain.round = undefined;
    if ('result' in outcome) round.resolve(outcome.result);
    else round.reject(outcome.error);
    this.#end(chain);
  }

  #cancel(chain: Chain, error: Error): void {
    if (!this.#chains.has(chain.scope)) return;
    chain.call?.cancel(error);
    const round = chain.round;
    chain.round = undefined;
    round?.reject(error);
    this.#end(chain);
  }

  #end(chain: Chain): void {
    if (this.#chains.get(chain.scope) !== chain) return;
    clearTimeout(chain.expiry);
    this.#chains.delete(chain.scope);
    this.host.release(chain.scope);
  }

  #sign(chain: Chain): string {
    const payload: StatePayload = { s: chain.scope, m: chain.method, d: chain.digest, n: chain.roundNumber };
    return this.#tokens.sign(STATE_PURPOSE, payload);
  }

  #verify(chain: Chain, state: string, params: Record<string, unknown>): boolean {
    const payload = this.#tokens.verify(STATE_PURPOSE, state) as StatePayload | undefined;
    if (payload === undefined) return false;
    return (
      payload.s === chain.scope &&
      payload.n === chain.roundNumber &&
      payload.m === chain.method &&
      payload.d === targetDigest(chain.method, params)
    );
  }
}
