// One client request to the upstream that serves it: through the in-flight table (ids,
// deadlines, cancellation), a 2026-07-28 upstream's rounds or a worker's call, each call published
// (upstream-call events) whatever its era. The dispatcher decides which upstream; this goes there.
import { orUrlElicitation, sharedCallOptions } from './user-workers.js';
import { NO_IDENTITY } from '../upstream/worker-set.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { UpstreamCallStart } from '../observability/events.js';
import type { McpResult, PerSessionCallOptions } from '../contracts/upstream.js';
import { upstreamParams } from '../modern/result-shape.js';
import type { UpstreamRounds } from '../modern/upstream-rounds.js';
import { forwardModern, type AskClient } from './modern-forward.js';
import { requestKey, type RequestContext, type RequestKey } from '../contracts/request-context.js';
import type { Catalog, Route } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import type { InFlightTable } from './in-flight.js';
import type { ResourceUris } from './resource-uris.js';
import { withTraceContext, type NotificationEvents, type RequestEvents } from './request-events.js';
import type { SessionCatalogs } from './session-catalogs.js';
import type { PerSessionRouter } from './per-session-router.js';
import type { UpstreamEntry } from './upstream-entry.js';

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
}

/** Shared by every retry without a progress token: nothing to allocate per call. */
const CONTINUATION: PerSessionCallOptions = Object.freeze({ continuation: true });

export class Forwarder {
  readonly #parts: ForwarderParts;

  constructor(parts: ForwarderParts) {
    this.#parts = parts;
  }

  async forwardNamed(
    ctx: RequestContext,
    request: JsonRpcRequest,
    route: Route | undefined,
    unknown: string,
    catalog: Catalog,
  ): Promise<McpResult> {
    if (!route) throw new GatewayError('INVALID_PARAMS', `${unknown}: ${String(request.params?.name)}`);
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

  async forward(
    ctx: RequestContext,
    request: JsonRpcRequest,
    upstream: string,
    params: Record<string, unknown> | undefined,
    catalog: Catalog = this.#parts.catalogs.catalog,
  ): Promise<McpResult> {
    const entry = this.#parts.upstreams.get(upstream);
    if (!entry) throw new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${upstream} is not configured`);
    // The session's own worker failed to give its lists moments ago (it cannot start, say): its call would fail alike.
    const lost = this.#parts.sessionCatalogs.failure(catalog, upstream);
    if (lost) throw lost;
    const key = requestKey(ctx.scope, request.id);
    if (this.#parts.inFlight.has(key))
      throw new GatewayError('INVALID_REQUEST', `Request id ${JSON.stringify(request.id)} is already in use`);
    // A 2026-07-28 upstream: stateless, with the client's _meta (a dual-era one keeps 2025 sessions on their path).
    const modern = entry.workers.speaksModern && (ctx.stateless || !entry.workers.dualEra);
    let continuation = false;
    if (ctx.stateless && !modern) {
      if (request.params?.requestState !== undefined) {
        // Only a per-session call can be waiting for input; the retry continues it.
        if (!entry.workers.perScope)
          throw new GatewayError(
            'INVALID_PARAMS',
            'requestState is not valid: this request was never answered with input_required',
          );
        // The params as sent (inputResponses, requestState, progressToken), names as the upstream has them.
        continuation = true;
      } else {
        params = upstreamParams(params);
      }
    }
    const events = this.#parts.events;
    const callStart = events.callStart(upstream, entry.networkTransport, request);
    // The subscriber (tracing) named the call's own span: it travels in _meta (SEP-414), to every upstream.
    if (callStart?.traceparent !== undefined)
      params = withTraceContext(params, callStart.traceparent, callStart.tracestate);
    const started = performance.now();
    let result: McpResult | undefined;
    let failure: unknown;
    try {
      // Both eras' calls are published alike: metrics and tracing see every upstream call.
      result = modern
        ? await this.#forwardModern(ctx, request, upstream, entry, key, params, catalog)
        : await this.#call(ctx, request, entry, upstream, key, params, continuation, callStart);
      return result;
    } catch (err) {
      failure = err;
      result = orUrlElicitation(err, ctx, request.method);
      failure = undefined;
      return result;
    } finally {
      events.callEnd(upstream, entry.networkTransport, request, started, callStart, failure, result);
    }
  }

  #forwardModern(
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
    const askClient: AskClient = (c, method, p, signal) => perSession.askClient(c, method, p, signal);
    return forwardModern({
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
