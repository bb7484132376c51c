// A client's request to a 2026-07-28 upstream: stateless, with the client's _meta and mirrored
// headers. A 2026 client gets input_required results through (the gateway's signed state around
// the upstream's); a 2025 session's client is asked each round's inputs as server-to-client
// requests on its session, and the upstream gets the answers until it has a final result.
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { wantsLog } from '../jsonrpc/meta-keys.js';
import { CLIENT_CAPABILITY } from '../stateless/input-chains.js';
import type { MirroredParam } from '../contracts/mcp-handler.js';
import type { UpstreamRounds } from '../stateless/upstream-rounds.js';
import type { CallOptions, McpResult } from '../contracts/upstream.js';
import type { RequestContext, RequestKey } from '../contracts/request-context.js';
import { GUARDED_ASKS, whoOf, type Guardrails } from '../guardrails/chains.js';
import { NO_IDENTITY } from '../upstream/worker-set.js';
import { mirroredHeaders } from '../upstream/connection/stateless-headers.js';
import type { InFlightTable } from './in-flight.js';
import type { UpstreamEntry } from './upstream-entry.js';

/** Asks a 2025 session's client something (sampling, elicitation, roots) on its session, from any replica. */
export type AskClient = (
  ctx: RequestContext,
  upstream: string,
  method: string,
  params: Record<string, unknown> | undefined,
  signal: AbortSignal,
) => Promise<McpResult>;

export interface StatelessForward {
  ctx: RequestContext;
  request: JsonRpcRequest;
  upstream: string;
  entry: UpstreamEntry;
  /** The request's params, names as the upstream has them. */
  params: Record<string, unknown> | undefined;
  /** A tool's arguments mirrored into Mcp-Param-* headers. */
  mirrored: readonly MirroredParam[] | undefined;
  rounds: UpstreamRounds;
  inFlight: InFlightTable;
  key: RequestKey;
  /** Absent: 2025 clients cannot be bridged (their input_required rounds fail). */
  askClient?: AskClient | undefined;
  maxRounds: number;
  /** A stateless client's rounds: the upstream's asks checked before it sees them, its answers before the upstream. */
  guardrails?: Guardrails | undefined;
}

export async function forwardStateless(f: StatelessForward): Promise<McpResult> {
  const { ctx, request, upstream, entry, rounds } = f;
  const outgoing = await rounds.outgoing(ctx, upstream, request.method, f.params);
  if (f.guardrails && outgoing.asked)
    outgoing.params = await guardAnswers(f.guardrails, f, outgoing.asked, outgoing.params);
  const tracked = f.inFlight.begin(f.key, entry.deadline);
  const options: CallOptions = {
    onNotification: (n) => {
      tracked.touch();
      // The upstream was asked for the client's level; one that sends more does not get it through.
      if (n.method !== 'notifications/message' || wantsLog(ctx.logLevel, n.params?.level)) ctx.sink.send(n);
    },
    ...(f.mirrored ? { headers: mirroredHeaders(f.mirrored, f.params?.arguments) } : {}),
    // With auth on: an upstream that acts for users (token exchange, claim headers) is called as this one.
    ...(ctx.caller ? { caller: ctx.caller } : {}),
    // Whose a private result the cache keeps is.
    principal: ctx.principal,
  };
  try {
    let params = outgoing.params;
    for (let round = outgoing.round; ; round++) {
      tracked.call = entry.workers.call(request.method, params, options, ctx.scope, NO_IDENTITY);
      const result = await tracked.call.promise;
      if (ctx.stateless) {
        const shaped = rounds.incoming(ctx, upstream, request.method, f.params, result, outgoing.round);
        return f.guardrails ? await guardInputRequests(f.guardrails, f, shaped) : shaped;
      }
      if (result.resultType !== 'input_required') {
        const { resultType: _type, ...rest } = result;
        return rest;
      }
      if (round + 1 > f.maxRounds) {
        throw new GatewayError(
          'INPUT_ROUNDS_EXCEEDED',
          `Upstream ${upstream} asked for input ${round + 1} times for one ${request.method}; the gateway allows ` +
            `${f.maxRounds}`,
          {
            upstream,
            maxRounds: f.maxRounds,
          },
        );
      }
      const answers = await askRound(f, result, (call) => {
        tracked.touch();
        tracked.call = call;
      });
      params = { ...params, inputResponses: answers };
      if (typeof result.requestState === 'string') params.requestState = result.requestState;
      else delete params.requestState;
    }
  } finally {
    f.inFlight.end(f.key, tracked);
  }
}

/** One input_required round for a 2025 client: each input request asked on its session, answered together. */
async function askRound(
  f: StatelessForward,
  result: McpResult,
  track: (call: { promise: Promise<McpResult>; cancel(error: Error): void }) => void,
): Promise<Record<string, unknown>> {
  const { ctx, upstream } = f;
  const requests = isObject(result.inputRequests) ? Object.entries(result.inputRequests) : [];
  if (requests.length === 0)
    throw new GatewayError(
      'UPSTREAM_PROTOCOL_ERROR',
      `Upstream ${upstream} answered input_required without inputRequests`,
    );
  // Everything needed is checked before anything is asked: the client learns all it lacks at once.
  const missing: Record<string, unknown> = {};
  for (const [, req] of requests) {
    const method = isObject(req) && typeof req.method === 'string' ? req.method : '';
    const capability = CLIENT_CAPABILITY.get(method);
    if (capability === undefined)
      throw new GatewayError(
        'UPSTREAM_PROTOCOL_ERROR',
        `Upstream ${upstream} asked for input by an unknown method ${JSON.stringify(method)}`,
      );
    if (ctx.clientCapabilities[capability] === undefined) missing[capability] = {};
  }
  if (Object.keys(missing).length > 0) {
    throw new GatewayError(
      'MISSING_CLIENT_CAPABILITY',
      `${f.request.method} needs the client capabilities ${Object.keys(missing).join(', ')}`,
      { requiredCapabilities: missing },
    );
  }
  const ask = f.askClient;
  if (!ask)
    throw new GatewayError('MISSING_CLIENT_CAPABILITY', 'This client cannot be asked for input', {
      requiredCapabilities: missing,
    });
  const controller = new AbortController();
  const all = Promise.all(
    requests.map(async ([key, req]) => {
      const { method, params } = req as { method: string; params?: unknown };
      return [key, await ask(ctx, upstream, method, isObject(params) ? params : undefined, controller.signal)] as const;
    }),
  );
  const asked = all.then(() => ({}));
  // Only a handle for cancellation: its failure is this function's, thrown below.
  asked.catch(() => undefined);
  track({ promise: asked, cancel: (error) => controller.abort(error) });
  try {
    return Object.fromEntries(await all);
  } catch (err) {
    controller.abort(err);
    throw err;
  }
}

/**
 * An input_required result for a stateless client: each ask in it (sampling, elicitation) through the
 * ask chain of the upstream and the endpoint the client came to, toward the client. A block fails the
 * request: the client sees none of it.
 */
async function guardInputRequests(guardrails: Guardrails, f: StatelessForward, result: McpResult): Promise<McpResult> {
  if (result.resultType !== 'input_required' || !isObject(result.inputRequests)) return result;
  const chain = guardrails.askChain(guardrails.endpointList(f.ctx.endpoint), f.upstream);
  if (chain.request.length === 0) return result;
  const who = whoOf(f.ctx);
  const inputRequests: Record<string, unknown> = {};
  for (const [key, req] of Object.entries(result.inputRequests)) {
    const method = isObject(req) && typeof req.method === 'string' ? req.method : '';
    inputRequests[key] =
      isObject(req) && GUARDED_ASKS.has(method) && isObject(req.params)
        ? { ...req, params: await guardrails.askRequest(chain, who, method, req.params) }
        : req;
  }
  return { ...result, inputRequests };
}

/** A stateless client's retry: each answer to an ask through the ask chain's response phase, toward the upstream. */
async function guardAnswers(
  guardrails: Guardrails,
  f: StatelessForward,
  asked: ReadonlyMap<string, string>,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const chain = guardrails.askChain(guardrails.endpointList(f.ctx.endpoint), f.upstream);
  if (chain.response.length === 0 || !isObject(params.inputResponses)) return params;
  const who = whoOf(f.ctx);
  const answers: Record<string, unknown> = { ...params.inputResponses };
  for (const [key, answer] of Object.entries(answers)) {
    const method = asked.get(key) ?? '';
    if (GUARDED_ASKS.has(method)) answers[key] = await guardrails.run(chain.response, 'response', method, who, answer);
  }
  return { ...params, inputResponses: answers };
}
