// What the dispatcher publishes about each request and each upstream call it makes
// (observability/events.ts): request:start/end, upstream:call-start/end. Values a client chooses
// are bounded here, for every subscriber: unknown methods and versions share one name, tools and
// prompts only from the catalog. The start events are built only when someone hears them (tracing).
import { GatewayError, toErrorObject } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcNotification, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { isKnownMethod } from '../jsonrpc/params-schemas.js';
import { STATELESS_VERSIONS, SUPPORTED_VERSIONS } from '../jsonrpc/versions.js';
import type { DataPathEvents, RequestStart, UpstreamCallStart } from '../observability/events.js';
import type { McpResult } from '../contracts/upstream.js';
import type { HttpOrigin, RequestContext } from '../contracts/request-context.js';
import type { CatalogManager } from './catalog-manager.js';
import { requester } from '../rate-limit/request-facts.js';

const OTHER_LABEL = '_other';

const KNOWN_VERSIONS: ReadonlySet<string> = new Set([...SUPPORTED_VERSIONS, ...STATELESS_VERSIONS]);

type EndContext = Pick<RequestContext, 'stateless' | 'scope' | 'principal' | 'protocolVersion' | 'http'>;

export class RequestEvents {
  /** Each traced request's request:start while it runs (only when tracing listens). */
  readonly #starts = new WeakMap<JsonRpcRequest, RequestStart>();
  /** A virtual server's requests as its view rewrote them, until they end. */
  readonly #routed = new WeakMap<JsonRpcRequest, JsonRpcRequest>();

  constructor(
    private readonly diagnostics: DataPathEvents,
    private readonly catalogs: CatalogManager,
  ) {}

  /** request:start; nothing is built when nobody hears it. */
  start(
    sessionId: string | undefined,
    protocolVersion: string,
    http: HttpOrigin | undefined,
    request: JsonRpcRequest,
  ): RequestStart | undefined {
    if (!this.diagnostics.has('request:start')) return undefined;
    const meta = request.params?._meta;
    // SEP-414: the context a request carries in its _meta is its own; the HTTP header is the POST's.
    const fromMeta = isObject(meta) && typeof meta.traceparent === 'string';
    const start: RequestStart = {
      method: boundedMethod(request.method),
      target: this.#target(request),
      sessionId,
      protocolVersion,
      jsonrpcId: String(request.id),
      resourceUri: typeof request.params?.uri === 'string' ? request.params.uri : undefined,
      traceparent: fromMeta ? (meta.traceparent as string) : http?.traceparent,
      tracestate: fromMeta ? (typeof meta.tracestate === 'string' ? meta.tracestate : undefined) : http?.tracestate,
    };
    this.diagnostics.emit('request:start', start);
    this.#starts.set(request, start);
    return start;
  }

  /**
   * `rewritten` is what `request` became (a virtual server's view of it, call_tool's tools/call):
   * its end is published under the catalog's names (`routed`) and its upstream calls under
   * `request`'s start.
   */
  rewritten(request: JsonRpcRequest, rewritten: JsonRpcRequest): JsonRpcRequest {
    this.#routed.set(request, rewritten);
    const start = this.#starts.get(request);
    if (start) this.#starts.set(rewritten, start);
    return rewritten;
  }

  /** What `request` became on its way (call_tool's call, then a view's rewrite of it), once: asked when it ends. */
  routed(request: JsonRpcRequest): JsonRpcRequest {
    let last = request;
    for (let next = this.#routed.get(last); next !== undefined; next = this.#routed.get(last)) {
      this.#routed.delete(last);
      last = next;
    }
    return last;
  }

  /** `derived`, a request the gateway makes for `request` (one per upstream), calls under `request`'s span. */
  derive(request: JsonRpcRequest, derived: JsonRpcRequest): JsonRpcRequest {
    const start = this.#starts.get(request);
    if (start) this.#starts.set(derived, start);
    return derived;
  }

  /** The request has been answered: its calls are over. */
  done(request: JsonRpcRequest): void {
    this.#starts.delete(request);
  }

  end(
    ctx: EndContext,
    request: JsonRpcRequest,
    started: number,
    start: RequestStart | undefined,
    errorType: string,
    errorCode: string,
    result: McpResult | undefined,
  ): void {
    if (!this.diagnostics.has('request:end')) return;
    const params = request.params;
    const name = typeof params?.name === 'string' ? params.name : '';
    const known = this.#target(request);
    this.diagnostics.emit('request:end', {
      method: boundedMethod(request.method),
      tool: request.method === 'tools/call' ? known : '',
      prompt: request.method === 'prompts/get' ? known : '',
      errorType,
      errorCode,
      seconds: (performance.now() - started) / 1000,
      principal: ctx.principal,
      scope: ctx.scope,
      stateless: ctx.stateless,
      protocolVersion: boundedVersion(ctx.protocolVersion),
      requestId: ctx.http?.requestId,
      target: name || (typeof params?.uri === 'string' ? params.uri : undefined),
      toolError: result?.isError === true,
      start,
    });
  }

  /** upstream:call-start, when anyone hears it; its hearer may fill in the trace context to send on. */
  callStart(upstream: string, transport: string, request: JsonRpcRequest): UpstreamCallStart | undefined {
    if (!this.diagnostics.has('upstream:call-start')) return undefined;
    const start: UpstreamCallStart = {
      upstream,
      method: boundedMethod(request.method),
      target: this.#target(request),
      transport,
      request: this.#starts.get(request),
    };
    this.diagnostics.emit('upstream:call-start', start);
    return start;
  }

  callEnd(
    ctx: RequestContext,
    upstream: string,
    transport: string,
    request: JsonRpcRequest,
    started: number,
    start: UpstreamCallStart | undefined,
    failure: unknown,
    result: McpResult | undefined,
  ): void {
    if (!this.diagnostics.has('upstream:call-end')) return;
    const target = start?.target ?? this.#target(request);
    this.diagnostics.emit('upstream:call-end', {
      upstream,
      method: boundedMethod(request.method),
      tool: request.method === 'tools/call' ? target : '',
      prompt: request.method === 'prompts/get' ? target : '',
      errorType: failure !== undefined ? failureCode(failure) : result?.isError === true ? 'tool_error' : '',
      transport,
      seconds: (performance.now() - started) / 1000,
      start,
      who: requester(ctx),
    });
  }

  /** A tool or prompt the catalog has, by the name clients see (never a resource URI: unbounded). */
  #target(request: JsonRpcRequest): string {
    const name = request.params?.name;
    if (typeof name !== 'string') return '';
    const catalog = this.catalogs.catalog;
    if (request.method === 'tools/call') return catalog.tool(name) ? name : '';
    if (request.method === 'prompts/get') return catalog.prompt(name) ? name : '';
    return '';
  }
}

/** The notifications a server sends (2025 revisions and the tasks extension): an upstream's others are `_other`. */
const SERVER_NOTIFICATIONS: ReadonlySet<string> = new Set([
  'notifications/message',
  'notifications/progress',
  'notifications/cancelled',
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/tasks/status',
  'notifications/tasks',
  'notifications/elicitation/complete',
]);

/** The client an upstream's notification goes to: a 2025 session's scope is its id. */
type NotificationTarget = Pick<RequestContext, 'stateless' | 'scope' | 'protocolVersion'>;

/**
 * What the data path publishes about notifications (tracing): a client's as the virtual server
 * gets it, an upstream's as it is passed on. Nothing is built when nobody hears them.
 */
export class NotificationEvents {
  constructor(
    private readonly diagnostics: DataPathEvents,
    /** OTel's network.transport of an upstream (`pipe`, `tcp`). */
    private readonly transportOf: (upstream: string) => string,
  ) {}

  fromClient(ctx: NotificationTarget & Pick<RequestContext, 'http'>, n: JsonRpcNotification): void {
    if (!this.diagnostics.has('notification')) return;
    const own = ownTraceContext(n);
    this.diagnostics.emit('notification', {
      method: boundedMethod(n.method),
      upstream: undefined,
      transport: 'tcp',
      sessionId: ctx.stateless ? undefined : ctx.scope,
      protocolVersion: ctx.protocolVersion,
      traceparent: own ? own.traceparent : ctx.http?.traceparent,
      tracestate: own ? own.tracestate : ctx.http?.tracestate,
      delivered: true,
    });
  }

  /** `call`: the upstream call it belongs to (progress), whose span it continues unless it carries its own context. */
  fromUpstream(
    upstream: string,
    target: NotificationTarget,
    n: JsonRpcNotification,
    delivered: boolean,
    call?: UpstreamCallStart,
  ): void {
    if (!this.diagnostics.has('notification')) return;
    const own = ownTraceContext(n);
    this.diagnostics.emit('notification', {
      method: SERVER_NOTIFICATIONS.has(n.method) ? n.method : OTHER_LABEL,
      upstream,
      transport: this.transportOf(upstream),
      sessionId: target.stateless ? undefined : target.scope,
      protocolVersion: target.protocolVersion,
      traceparent: own ? own.traceparent : call?.traceparent,
      tracestate: own ? own.tracestate : call?.tracestate,
      delivered,
    });
  }
}

/** The trace context a message carries in its own `params._meta` (SEP-414). */
function ownTraceContext(m: JsonRpcNotification): { traceparent: string; tracestate: string | undefined } | undefined {
  const meta = m.params?._meta;
  if (!isObject(meta) || typeof meta.traceparent !== 'string') return undefined;
  return {
    traceparent: meta.traceparent,
    tracestate: typeof meta.tracestate === 'string' ? meta.tracestate : undefined,
  };
}

/** Methods a client chooses, bounded: unknown ones share one name. */
function boundedMethod(method: string): string {
  return isKnownMethod(method) ? method : OTHER_LABEL;
}

/** A protocol version as a label: only those this gateway speaks. */
function boundedVersion(version: string): string {
  return KNOWN_VERSIONS.has(version) ? version : OTHER_LABEL;
}

/** An upstream's own error code as a label: JSON-RPC's reserved range by number, anything else as one value. */
export function errorCodeLabel(code: number): string {
  return Number.isInteger(code) && code >= -32768 && code <= -32000 ? String(code) : OTHER_LABEL;
}

/** A failed upstream call's JSON-RPC code, as a bounded label. */
function failureCode(err: unknown): string {
  const code = toErrorObject(err).code;
  return err instanceof GatewayError ? String(code) : errorCodeLabel(code);
}

/** `params` with the W3C trace context in its _meta (a copy: the caller's object stays as it was). */
export function withTraceContext(
  params: Record<string, unknown> | undefined,
  traceparent: string,
  tracestate: string | undefined,
): Record<string, unknown> {
  const meta: Record<string, unknown> = isObject(params?._meta) ? { ...params._meta } : {};
  meta.traceparent = traceparent;
  if (tracestate !== undefined) meta.tracestate = tracestate;
  else delete meta.tracestate;
  return { ...params, _meta: meta };
}
