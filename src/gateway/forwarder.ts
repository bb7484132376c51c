// One client request to the upstream that serves it: through the in-flight table (ids,
// deadlines, cancellation), a 2026-07-28 upstream's rounds or a worker's call. Every call takes one
// chain composed once (its events and a URL elicitation, its trace context), the era's call the
// innermost step: no era's branch can leave before its events. The dispatcher decides which upstream.
import { orUrlElicitation, sharedCallOptions } from './user-workers.js';
import { NO_IDENTITY } from '../upstream/worker-set.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { UpstreamCallStart } from '../observability/events.js';
import type { McpResult, PerSessionCallOptions } from '../contracts/upstream.js';
import { upstreamParams } from '../stateless/result-shape.js';
import type { UpstreamRounds } from '../stateless/upstream-rounds.js';
import { forwardStateless, type AskClient } from './stateless-forward.js';
import { requestKey, type RequestContext, type RequestKey } from '../contracts/request-context.js';
import type { Catalog, Route } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import type { InFlightTable } from './in-flight.js';
import type { ResourceUris } from './resource-uris.js';
import { withTraceContext, type NotificationEvents, type RequestEvents } from './request-events.js';
import type { SessionCatalogs } from './session-catalogs.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { UpstreamEntry } from './upstream-entry.js';
import { compose, type Wrapper } from './request-chain.js';
import { FairWait, type FairShares, type FairSlot } from './fair-shares.js';
import { requester } from '../rate-limit/rate-limiter.js';
import { pinRefusal } from './pin-policy.js';
import type { Guardrails } from '../guardrails/chains.js';

/** What forwarding reads: the dispatcher's options and the parts it shares with the dispatcher. */
export interface ForwarderParts {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  perSession: PerSessionRouter;
  catalogs: CatalogManager;
  uris: ResourceUris;
  rounds: UpstreamRounds;
  maxInputRounds: number;
  notifications?: NotificationEvents;
  /** The dispatcher's: every forwarded request not yet answered. */
  inFlight: InFlightTable;
  events: RequestEvents;
  /** A session's own lists, and the worker failures they met. */
  sessionCatalogs: SessionCatalogs;
  /** upstreams[].fairness: each principal's share of an upstream's calls on this replica. */
  fairShares: FairShares;
  /** What checks a stateless client's input_required rounds with a 2026-07-28 upstream. */
  guardrails?: Guardrails | undefined;
}

/**
 * One upstream call on its way: where it goes, its params (names as the upstream has them), the
 * catalog it read, whether it continues an input chain, and its call-start event once published.
 */
type CallStep = (
  ctx: RequestContext,
  request: JsonRpcRequest,
  upstream: string,
  entry: UpstreamEntry,
  key: RequestKey,
  params: Record<string, unknown> | undefined,
  catalog: Catalog,
  continuation: boolean,
  callStart: UpstreamCallStart | undefined,
) => Promise<McpResult>;

/**
 * upstream:call-start and -end around every call, whatever its era (metrics and tracing see them
 * all). A user's authorization the upstream needs first is, for a stateless client, a URL
 * elicitation: the call's outcome as published, not a failure, so it is answered inside this frame.
 */
function callEvents(events: RequestEvents): Wrapper<CallStep> {
  return (next) => async (ctx, request, upstream, entry, key, params, catalog, continuation) => {
    const callStart = events.callStart(upstream, entry.networkTransport, request);
    const started = performance.now();
    let result: McpResult | undefined;
    let failure: unknown;
    try {
      result = await next(ctx, request, upstream, entry, key, params, catalog, continuation, callStart);
      return result;
    } catch (err) {
      failure = err;
      result = orUrlElicitation(err, ctx, request.method);
      failure = undefined;
      return result;
    } finally {
      events.callEnd(ctx, upstream, entry.networkTransport, request, started, callStart, failure, result);
    }
  };
}

/** The span the call-start event's hearer (tracing) named travels in _meta (SEP-414), to every upstream. */
const traceContext: Wrapper<CallStep> =
  (next) => (ctx, request, upstream, entry, key, params, catalog, continuation, callStart) =>
    next(
      ctx,
      request,
      upstream,
      entry,
      key,
      callStart?.traceparent !== undefined
        ? withTraceContext(params, callStart.traceparent, callStart.tracestate)
        : params,
      catalog,
      continuation,
      callStart,
    );

/**
 * upstreams[].fairness, the innermost wrapper (the call's events count its wait): a principal past its share of the
 * upstream waits its turn, held in the in-flight table so that a cancellation (notifications/cancelled, its session's
 * end, shutdown) takes it out of the queue; the place it then holds is released once, when the call ends. Who a
 * principal is: as the rate limits say (`requester`). An upstream without fairness costs one map lookup.
 */
function fairShare(shares: FairShares, inFlight: InFlightTable): Wrapper<CallStep> {
  return (next) => (ctx, request, upstream, entry, key, params, catalog, continuation, callStart) => {
    // No fairness there: no principal's name is even built.
    if (!shares.takesShare(upstream, entry.fairness))
      return next(ctx, request, upstream, entry, key, params, catalog, continuation, callStart);
    let turn: FairSlot | FairWait | undefined;
    try {
      turn = shares.enter(upstream, entry.fairness, requester(ctx));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    if (turn === undefined) return next(ctx, request, upstream, entry, key, params, catalog, continuation, callStart);
    const taken = turn;
    return (async () => {
      let slot: FairSlot;
      if (taken instanceof FairWait) {
        const held = inFlight.hold(key, taken);
        try {
          slot = await taken.promise;
        } finally {
          inFlight.end(key, held);
        }
        // Cancelled as its turn came: the place goes back before anything is sent.
        if (taken.cancelled) {
          slot.release();
          throw taken.cancelled;
        }
      } else slot = taken;
      try {
        return await next(ctx, request, upstream, entry, key, params, catalog, continuation, callStart);
      } finally {
        slot.release();
      }
    })();
  };
}

/** A 2026-07-28 upstream: stateless, with the client's _meta (a dual-era one keeps 2025 sessions on their path). */
function callsStateless(ctx: RequestContext, entry: UpstreamEntry): boolean {
  return entry.workers.speaksStateless === true && (ctx.stateless || !entry.workers.dualEra);
}

/** Shared by every retry without a progress token: nothing to allocate per call. */
const CONTINUATION: PerSessionCallOptions = Object.freeze({ continuation: true });

export class Forwarder {
  readonly #parts: ForwarderParts;
  /** Every upstream call's way, whatever its era: composed once. */
  readonly #chain: CallStep;

  constructor(parts: ForwarderParts) {
    this.#parts = parts;
    this.#chain = compose(
      this.#byEra,
      callEvents(parts.events),
      traceContext,
      fairShare(parts.fairShares, parts.inFlight),
    );
  }

  async forwardNamed(
    ctx: RequestContext,
    request: JsonRpcRequest,
    route: Route | undefined,
    unknown: string,
    catalog: Catalog,
  ): Promise<McpResult> {
    if (!route) throw new GatewayError('INVALID_PARAMS', `${unknown}: ${String(request.params?.name)}`);
    if (route.refused)
      throw pinRefusal(
        route.refused,
        route.upstream,
        request.method === 'prompts/get' ? 'prompts' : 'tools',
        String(request.params?.name),
      );
    const result = await this.forward(
      ctx,
      request,
      route.upstream,
      { ...request.params, name: route.original },
      catalog,
    );
    // Resource links and embedded resources name URIs too.
    return this.#parts.uris.result(route.upstream, request.method, result);
  }

  /** Rejects rather than throws: a caller that fans out (Promise.all) starts every call. */
  forward(
    ctx: RequestContext,
    request: JsonRpcRequest,
    upstream: string,
    params: Record<string, unknown> | undefined,
    catalog: Catalog = this.#parts.catalogs.catalog,
  ): Promise<McpResult> {
    const entry = this.#parts.upstreams.get(upstream);
    if (!entry)
      return Promise.reject(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${upstream} is not configured`));
    // The session's own worker failed to give its lists moments ago (it cannot start, say): its call would fail alike.
    const lost = this.#parts.sessionCatalogs.failure(catalog, upstream);
    if (lost) return Promise.reject(lost);
    const key = requestKey(ctx.scope, request.id);
    if (this.#parts.inFlight.has(key))
      return Promise.reject(
        new GatewayError('INVALID_REQUEST', `Request id ${JSON.stringify(request.id)} is already in use`),
      );
    let continuation = false;
    if (ctx.stateless && !callsStateless(ctx, entry)) {
      if (request.params?.requestState !== undefined) {
        // Only a per-session call can be waiting for input; the retry continues it.
        if (!entry.workers.perScope)
          return Promise.reject(
            new GatewayError(
              'INVALID_PARAMS',
              'requestState is not valid: this request was never answered with input_required',
            ),
          );
        // The params as sent (inputResponses, requestState, progressToken), names as the upstream has them.
        continuation = true;
      } else {
        params = upstreamParams(params);
      }
    }
    return this.#chain(ctx, request, upstream, entry, key, params, catalog, continuation, undefined);
  }

  /** The innermost step, reached only through the wrappers: the call as its upstream's era takes it. */
  #byEra: CallStep = (ctx, request, upstream, entry, key, params, catalog, continuation, callStart) =>
    callsStateless(ctx, entry)
      ? this.#forwardStateless(ctx, request, upstream, entry, key, params, catalog)
      : this.#call(ctx, request, entry, upstream, key, params, continuation, callStart);

  #forwardStateless(
    ctx: RequestContext,
    request: JsonRpcRequest,
    upstream: string,
    entry: UpstreamEntry,
    key: RequestKey,
    params: Record<string, unknown> | undefined,
    catalog: Catalog,
  ): Promise<McpResult> {
    const mirrored = request.method === 'tools/call' ? catalog.tool(String(request.params?.name))?.mirrored : undefined;
    const { rounds, maxInputRounds: maxRounds, perSession } = this.#parts;
    const askClient: AskClient = (c, u, method, p, signal) => perSession.askClient(c, u, method, p, signal);
    return forwardStateless({
      ctx,
      request,
      upstream,
      entry,
      params,
      mirrored,
      rounds,
      inFlight: this.#parts.inFlight,
      key,
      askClient,
      maxRounds,
      guardrails: this.#parts.guardrails,
    });
  }

  async #call(
    ctx: RequestContext,
    request: JsonRpcRequest,
    entry: UpstreamEntry,
    upstream: string,
    key: RequestKey,
    params: Record<string, unknown> | undefined,
    continuation: boolean,
    callStart?: UpstreamCallStart,
  ): Promise<McpResult> {
    const tracked = this.#parts.inFlight.begin(key, entry.deadline);
    const wantsProgress = isObject(params?._meta) && params._meta.progressToken !== undefined;
    const options: PerSessionCallOptions | undefined = wantsProgress
      ? {
          onNotification: (n) => {
            tracked.touch();
            this.#parts.notifications?.fromUpstream(upstream, ctx, n, ctx.sink.send(n), callStart);
          },
          continuation,
        }
      : continuation
        ? CONTINUATION
        : undefined;
    // A shared set runs the call here; a set with a worker per scope runs it on the scope's owner replica.
    if (!entry.workers.perScope) {
      try {
        // With auth on, the call carries who it is for: an upstream that acts for users calls as them.
        tracked.call = entry.workers.call(
          request.method,
          params,
          sharedCallOptions(ctx, options),
          ctx.scope,
          NO_IDENTITY,
        );
        return await tracked.call.promise;
      } finally {
        this.#parts.inFlight.end(key, tracked);
      }
    }
    try {
      return await this.#parts.perSession.call(ctx, upstream, request.method, params, options, (call) => {
        tracked.call = call;
      });
    } finally {
      this.#parts.inFlight.end(key, tracked);
    }
  }
}
