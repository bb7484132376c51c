import { createHash, randomBytes } from 'node:crypto';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { LOG_LEVELS, META, RESERVED_META_PREFIX } from '../jsonrpc/meta-keys.js';
import type { McpResult } from '../contracts/upstream.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { SpentStates } from '../contracts/spent-states.js';
import { SignedTokens } from '../contracts/signed-token.js';
import { MemorySpentStates } from '../session/spent-states.js';

/** The revision the gateway speaks to 2026-07-28 upstreams. */
const STATELESS_REVISION = '2026-07-28';
/** Marks a requestState of this module (the per-session chains' states look otherwise). */
const STATE_PREFIX = 'gw1.';
/** What these states are signed as: under the shared stateSecret, no other signed token verifies as one. */
const STATE_PURPOSE = 'requestState/upstream-round';
/** The most input requests one round may ask for, and the largest state the gateway wraps. */
const MAX_INPUT_REQUESTS = 64;
const MAX_UPSTREAM_STATE = 64 * 1024;

export interface UpstreamRoundsOptions {
  /** HMAC key; a random one per process when the config gives none. */
  secret?: string | undefined;
  ttlMs: number;
  maxRounds: number;
  /**
   * Where used states are recorded: Redis when the sessions are there (every replica refuses a replay), else this
   * replica's memory.
   */
  spent?: SpentStates | undefined;
}

interface StatePayload {
  /** The upstream's own requestState, if it gave one. */
  x?: string;
  /** Who, where and what: digest of principal, upstream, method, target and arguments. */
  d: string;
  /** The round this state continues (1 after the first input_required). */
  n: number;
  /** The input keys asked for: answers to any other key never reach the upstream. */
  k: string[];
  /** The method each of `k` was asked by (absent in states made before it was kept). */
  m?: string[];
  /** A nonce that makes each state single-use (the token carries the expiry). */
  j: string;
}

/** What goes upstream for one client request, and which round it is. */
export interface Outgoing {
  params: Record<string, unknown>;
  round: number;
  /** Of a retry: the method each answered key was asked by (the guardrails check answers by it). */
  asked?: ReadonlyMap<string, string>;
}

/**
 * Input-required rounds between a client and a 2026-07-28 upstream. The upstream's
 * `requestState` never reaches the client as it is: the gateway wraps it in a state of its own,
 * HMAC-signed, bound to the principal, the upstream and the request (method, target, arguments),
 * single-use, with an expiry and the round number, so a tampered, replayed, expired or foreign
 * state is refused (-32602) and an upstream that asks forever is stopped. On the retry the
 * upstream gets its own state back, and only the answers to what it asked.
 */
export class UpstreamRounds {
  readonly #tokens: SignedTokens;
  readonly #spent: SpentStates;

  constructor(private readonly options: UpstreamRoundsOptions) {
    this.#tokens = new SignedTokens(options.secret ? options.secret : undefined);
    this.#spent = options.spent ?? new MemorySpentStates();
  }

  /** Whether a requestState is one of these (and not a per-session chain's). */
  static owns(requestState: unknown): boolean {
    return typeof requestState === 'string' && requestState.startsWith(STATE_PREFIX);
  }

  /**
   * The params an upstream gets for a client's request: the client's `_meta` (a 2025 session's
   * capabilities and identity, as 2026-07-28 spells them), its own requestState unwrapped, and
   * only the answers it asked for.
   */
  async outgoing(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<Outgoing> {
    const { _meta: meta, requestState, inputResponses, ...rest } = params ?? {};
    const out: Record<string, unknown> = { ...rest, _meta: requestMeta(ctx, meta) };
    let round = 0;
    let asked: Map<string, string> | undefined;
    if (requestState !== undefined) {
      const state = await this.#open(requestState, digest(ctx, upstream, method, params));
      round = state.n;
      const methods = state.m;
      if (Array.isArray(methods)) asked = new Map(state.k.map((k, i) => [k, String(methods[i])]));
      if (state.x !== undefined) out.requestState = state.x;
      // Answers to keys never asked are dropped: the upstream hears only what it asked for.
      if (isObject(inputResponses)) out.inputResponses = pick(inputResponses, state.k);
      else if (inputResponses !== undefined) out.inputResponses = inputResponses;
    } else if (inputResponses !== undefined) {
      // Answers without a state (a client answering ahead): the upstream judges them.
      out.inputResponses = inputResponses;
    }
    return asked ? { params: out, round, asked } : { params: out, round };
  }

  /** The upstream's result as the client gets it: an input_required one with the gateway's state. */
  incoming(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    result: McpResult,
    round: number,
  ): McpResult {
    if (result.resultType !== 'input_required') return result;
    const next = round + 1;
    if (next > this.options.maxRounds) {
      throw new GatewayError(
        'INPUT_ROUNDS_EXCEEDED',
        `Upstream ${upstream} asked for input ${next} times for one ${method}; the gateway allows ` +
          `${this.options.maxRounds}`,
        {
          upstream,
          maxRounds: this.options.maxRounds,
        },
      );
    }
    const requests = isObject(result.inputRequests) ? result.inputRequests : {};
    const keys = Object.keys(requests);
    if (keys.length > MAX_INPUT_REQUESTS)
      throw new GatewayError(
        'UPSTREAM_PROTOCOL_ERROR',
        `Upstream ${upstream} asked for ${keys.length} inputs at once (at most ${MAX_INPUT_REQUESTS})`,
      );
    const upstreamState = result.requestState;
    if (
      upstreamState !== undefined &&
      (typeof upstreamState !== 'string' || upstreamState.length > MAX_UPSTREAM_STATE)
    ) {
      throw new GatewayError(
        'UPSTREAM_PROTOCOL_ERROR',
        `Upstream ${upstream} sent a requestState that is not a string of at most ${MAX_UPSTREAM_STATE} characters`,
      );
    }
    const payload: StatePayload = {
      ...(upstreamState !== undefined ? { x: upstreamState } : {}),
      d: digest(ctx, upstream, method, params),
      n: next,
      k: keys,
      m: keys.map((k) => {
        const r = requests[k];
        return isObject(r) && typeof r.method === 'string' ? r.method : '';
      }),
      j: randomBytes(12).toString('base64url'),
    };
    const expiresAt = Date.now() + this.options.ttlMs;
    return { ...result, requestState: `${STATE_PREFIX}${this.#tokens.sign(STATE_PURPOSE, payload, { expiresAt })}` };
  }

  /** Verifies a client's requestState against this request; throws REQUEST_STATE_INVALID. */
  async #open(state: unknown, expected: string): Promise<StatePayload> {
    const invalid = (why: string) => new GatewayError('REQUEST_STATE_INVALID', `requestState is not valid: ${why}`);
    if (typeof state !== 'string' || !state.startsWith(STATE_PREFIX)) throw invalid('not issued by this gateway');
    const opened = this.#tokens.open(STATE_PURPOSE, state.slice(STATE_PREFIX.length));
    if (!opened || opened.expiresAt === undefined) throw invalid('integrity check failed');
    const payload = opened.payload as StatePayload;
    if (payload.d !== expected) throw invalid('it belongs to another request, upstream or principal');
    if (opened.expired) throw invalid('expired');
    const fresh = typeof payload.j === 'string' && (await this.#spent.spend(payload.j, opened.expiresAt));
    if (!fresh) throw invalid('already used');
    return payload;
  }
}

/** What binds a state to one request: the principal, the upstream, the method, its target and arguments. */
function digest(
  ctx: RequestContext,
  upstream: string,
  method: string,
  params: Record<string, unknown> | undefined,
): string {
  const target = method === 'resources/read' ? params?.uri : params?.name;
  const args = method === 'tools/call' ? params?.arguments : method === 'prompts/get' ? params?.arguments : undefined;
  return createHash('sha256')
    .update(`${ctx.principal ?? ''}\u0000${upstream}\u0000${method}\u0000${String(target)}\u0000${canonical(args)}`)
    .digest('base64url')
    .slice(0, 32);
}

/** JSON with sorted keys: the same arguments hash alike whatever their order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

function pick(responses: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const k of keys) if (Object.hasOwn(responses, k)) kept[k] = responses[k];
  return kept;
}

/**
 * The `_meta` of a request to a 2026-07-28 upstream: the client's own keys (traceparent,
 * progressToken), and the per-request protocol fields from its context (its log level too), so
 * a 2025 session's client is described as a 2026 one would describe itself.
 */
export function requestMeta(ctx: RequestContext, meta: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (isObject(meta)) for (const [k, v] of Object.entries(meta)) if (!k.startsWith(RESERVED_META_PREFIX)) out[k] = v;
  // A 2025 session's level (logging/setLevel) too: without one the upstream sends no log messages.
  if (ctx.logLevel !== undefined && LOG_LEVELS.includes(ctx.logLevel)) out[META.logLevel] = ctx.logLevel;
  out[META.protocolVersion] = STATELESS_REVISION;
  out[META.clientCapabilities] = ctx.clientCapabilities;
  if (ctx.clientInfo) out[META.clientInfo] = ctx.clientInfo;
  return { ...out };
}
