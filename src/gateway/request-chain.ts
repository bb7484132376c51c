// The way every client request takes through the dispatcher, whatever its era or transport: the
// table of method handlers (method-handlers.ts) inside a chain of wrappers, composed once when the
// dispatcher is built. Outermost first: the reply (a stateless client's shape, errors mapped once),
// the request events, the catalog, the authorization policy, tool search, the virtual server's
// view, the admissions (rate limits, then quotas: only while rules exist, recomposed by a
// reload), the guardrails; then the method's handler. No wrapper branches around another: a
// 2026-07-28 request and a 2025 one pass the same events.
//
// The hot path's cost: a wrapper that works only before its next step returns that step's promise
// (no microtask); one that works after it awaits once. A step may throw instead of rejecting: the
// two outer wrappers are async functions, so either becomes the same error reply.
import type { Logger } from 'pino';
import { GatewayError, UpstreamRpcError, errorResponse, toErrorObject } from '../jsonrpc/errors.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/messages.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import type { Admission } from '../rate-limit/request-facts.js';
import type { StatelessResults } from '../stateless/result-shape.js';
import type { Catalog } from './catalog.js';
import type { CatalogManager } from './catalog-manager.js';
import { errorCodeLabel, type RequestEvents } from './request-events.js';
import { CATALOG_METHODS } from './request-params.js';
import { targetOf, type SessionCatalogs } from './session-catalogs.js';
import type { ServerView } from './server-views.js';

/**
 * One step of a request's way. `view`: the virtual server (servers[]) it came to, none for the
 * whole catalog; `catalog`: what it reads, once the catalog wrapper has found it (undefined outside).
 */
export type RequestStep<R, C extends Catalog | undefined> = (
  ctx: RequestContext,
  request: JsonRpcRequest,
  view: ServerView | undefined,
  catalog: C,
) => Promise<R>;

/** Inside the catalog wrapper: a method handler's shape. */
export type ResultStep = RequestStep<McpResult, Catalog>;
/** Outside it: a result not yet a reply. */
export type RoutingStep = RequestStep<McpResult, undefined>;
/** The whole chain: every way out is a reply. */
export type ReplyStep = RequestStep<JsonRpcResponse, undefined>;

/**
 * `request` becomes `call`: the chain runs `call` again from the catalog on (policy, view,
 * admissions, guardrails, handler), and `request`'s one request:end names `call` (the audit line,
 * the metrics): a client's request is counted once, under what it became.
 */
export type Reenter = (
  ctx: RequestContext,
  request: JsonRpcRequest,
  call: JsonRpcRequest,
  view: ServerView | undefined,
) => Promise<McpResult>;

/** Takes the next step, returns its own (which calls that one, or answers instead). */
export type Wrapper<S> = (next: S) => S;

/** `handler` inside `wrappers`, the first outermost. */
export function compose<S>(handler: S, ...wrappers: ReadonlyArray<Wrapper<S>>): S {
  let step = handler;
  for (let i = wrappers.length - 1; i >= 0; i--) step = wrappers[i]!(step);
  return step;
}

export interface RequestChainParts {
  events: RequestEvents;
  catalogs: CatalogManager;
  sessionCatalogs: SessionCatalogs;
  statelessResults: StatelessResults;
  log: Logger;
  /** The rate limits, then the quotas, each a wrapper; none (no rule of either): no wrapper at all. */
  admissions?: readonly Admission[] | undefined;
  /**
   * A wrapper between the catalog and the view (tool search: tool-search-step.ts), given the chain
   * from the catalog on, for the request a client's becomes (call_tool's tools/call).
   */
  inner?: (reenter: Reenter) => Wrapper<ResultStep>;
  /** The guardrails (config interceptors): innermost, next to the handler. */
  guardrails?: Wrapper<ResultStep>;
  /** The authorization policy (policy-step.ts): first inside the catalog, before tool search and the view. */
  authorization?: Wrapper<ResultStep>;
}

/** The dispatcher's whole chain around `handle` (the method table). */
export function requestChain(parts: RequestChainParts, handle: ResultStep): ReplyStep {
  const innermost = [
    ...(parts.admissions ?? []).filter((a) => !a.empty).map(admitted),
    ...(parts.guardrails ? [parts.guardrails] : []),
  ];
  const reenter: Reenter = (ctx, request, call, view) =>
    routed(ctx, parts.events.rewritten(request, call), view, undefined);
  const view = viewRewrite(parts.events);
  const outer = [...(parts.authorization ? [parts.authorization] : []), ...(parts.inner ? [parts.inner(reenter)] : [])];
  const inside = compose(handle, ...outer, view, ...innermost);
  const routed: RoutingStep = withCatalog(parts.catalogs, parts.sessionCatalogs)(inside);
  const evented = compose(routed, requestEvents(parts.events));
  return replies(parts.log, parts.statelessResults)(evented);
}

/**
 * The result as the reply, shaped for a stateless (2026-07-28) client as its revision has results
 * leave; any failure as the table's error reply: mapped here only. One no part of the gateway
 * raised (neither the table's nor an upstream's) is logged as a bug. (One wrapper, not two: each
 * wrapper that works after its next step costs every request a microtask turn.)
 */
export function replies(log: Logger, results: StatelessResults): (next: RoutingStep) => ReplyStep {
  return (next) => async (ctx, request, view, catalog) => {
    try {
      const result = await next(ctx, request, view, catalog);
      return {
        jsonrpc: '2.0',
        id: request.id,
        result: ctx.stateless ? results.shape(ctx, request.method, result) : result,
      };
    } catch (err) {
      if (!(err instanceof GatewayError) && !(err instanceof UpstreamRpcError))
        log.error({ err, method: request.method, reqId: ctx.http?.requestId }, 'unexpected error handling a request');
      return errorResponse(request.id, toErrorObject(err)) as JsonRpcResponse;
    }
  };
}

/**
 * request:start first, request:end on every way out (a throw, a stateless request, a view's
 * failure), naming the request as it was rewritten (a view, call_tool): metrics see the catalog's names.
 */
export function requestEvents(events: RequestEvents): Wrapper<RoutingStep> {
  return (next) => async (ctx, request, view, catalog) => {
    const started = performance.now();
    const start = events.start(ctx.stateless ? undefined : ctx.scope, ctx.protocolVersion, ctx.http, request);
    let errorType = '';
    let errorCode = '';
    let result: McpResult | undefined;
    try {
      result = await next(ctx, request, view, catalog);
      return result;
    } catch (err) {
      // The table's codes are few; an upstream's own are bounded to JSON-RPC's reserved range.
      if (err instanceof GatewayError) {
        errorType = err.type;
        errorCode = String(err.entry.code);
      } else {
        errorType = errorCode = errorCodeLabel(toErrorObject(err).code);
      }
      throw err;
    } finally {
      const routed = events.routed(request);
      if (start) events.done(routed);
      events.end(ctx, routed, started, start, errorType, errorCode, result);
    }
  };
}

/**
 * The catalog a request reads: a session with workers of its own reads their lists, everyone else
 * the shared catalog. Known at once (most requests), the next step is called at once.
 */
export function withCatalog(
  catalogs: CatalogManager,
  sessionCatalogs: SessionCatalogs,
): (next: ResultStep) => RoutingStep {
  return (next) => {
    const later = async (
      pending: Promise<Catalog>,
      ctx: RequestContext,
      request: JsonRpcRequest,
      view: ServerView | undefined,
    ): Promise<McpResult> => await next(ctx, request, view, await pending);
    return (ctx, request, view) => {
      if (!CATALOG_METHODS.has(request.method)) return next(ctx, request, view, catalogs.catalog);
      const catalog = sessionCatalogs.catalogFor(ctx, targetOf(request, view));
      return catalog instanceof Promise ? later(catalog, ctx, request, view) : next(ctx, request, view, catalog);
    };
  };
}

/** A virtual server's names and fixed arguments become the catalog's (what its handler and events see). */
export function viewRewrite(events: RequestEvents): Wrapper<ResultStep> {
  return (next) => (ctx, request, view, catalog) =>
    view
      ? next(ctx, events.rewritten(request, view.rewrite(ctx, request, catalog)), view, catalog)
      : next(ctx, request, view, catalog);
}

/**
 * Each request message against an admission (rate limits, quotas), named as the catalog names it
 * (after a view's rewrite): refused, it never reaches its handler (a task's tools/call counts as
 * it is created). A memory store answers at once, and the next step is called at once.
 */
export function admitted(limiter: Admission): Wrapper<ResultStep> {
  return (next) => {
    const later = async (admitted: Promise<void>, ...args: Parameters<ResultStep>): Promise<McpResult> => {
      await admitted;
      return next(...args);
    };
    return (ctx, request, view, catalog) => {
      const admitted = limiter.admit(ctx, request, catalog);
      return admitted ? later(admitted, ctx, request, view, catalog) : next(ctx, request, view, catalog);
    };
  };
}
