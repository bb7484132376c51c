import { randomUUID } from 'node:crypto';
import type { Caller, HttpOrigin, InFlightSlots, MessageSink, RequestContext } from '../contracts/request-context.js';
import { ERRORS, GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc/messages.js';
import { LIST_METHODS } from '../jsonrpc/list-methods.js';
import { DIRECTORY_READ, SKILLS_GET, SKILLS_LIST } from '../jsonrpc/meta-keys.js';
import { paramsProblem } from '../jsonrpc/params-schemas.js';
import type { SseWriter } from '../streams/sse-writer.js';
import { honouredListChanges, type ListenStreams } from './listen-streams.js';
import type { MirroredParam } from '../contracts/mcp-handler.js';
import { checkMirroredParams, readStatelessMeta, type HeaderLookup, type StatelessMeta } from './request-meta.js';

/** What a stateless (2026-07-28) request may ask; the rest is 404 -32601, as that revision says. */
const STATELESS_METHODS = new Set([
  'server/discover',
  ...LIST_METHODS.keys(),
  'tools/call',
  'prompts/get',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
  // The tasks extension (SEP-2663); its tasks/result and tasks/list of 2025-11-25 are gone.
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  // The skills extension (SEP-2640).
  SKILLS_LIST,
  SKILLS_GET,
  DIRECTORY_READ,
]);

/**
 * What serving stateless requests asks of the virtual server (the gateway's McpHandler has it).
 * Declared here, by shape, because stateless/ sits below gateway/ and must not import it.
 */
export interface StatelessHandler {
  capabilities(stateless: boolean): Record<string, unknown>;
  mirroredParams(tool: string): readonly MirroredParam[];
  watchResources(ctx: RequestContext, uris: unknown, sink: MessageSink): string[];
  watchTasks(ctx: RequestContext, taskIds: unknown, sink: MessageSink): Promise<string[]>;
  releaseScope(scope: string): void;
}

/** Errors about a stateless request are in-band (200), but for the one the spec gives 400. */
export function statelessStatus(response: JsonRpcResponse): number {
  return 'error' in response && response.error.code === ERRORS.MISSING_CLIENT_CAPABILITY.code
    ? ERRORS.MISSING_CLIENT_CAPABILITY.httpStatus
    : 200;
}

/**
 * The 2026-07-28 side of the endpoint: everything a stateless request needs is in its own
 * `_meta` and headers; no session is read or made. This checks such a request, builds its
 * RequestContext, names its scope, and serves `subscriptions/listen`. The HTTP reply itself
 * (JSON or an unrecorded SSE stream, in-flight bounds) is the transport's.
 */
export class StatelessServing {
  /** Stateless requests get a scope of their own: unique on this replica, never stored. */
  readonly #scopePrefix = `~${randomUUID().slice(0, 8)}.`;
  #nextScope = 0;

  constructor(
    private readonly handler: StatelessHandler,
    /** subscriptions/listen streams of stateless clients. */
    private readonly listens: ListenStreams,
    /** The in-flight share a principal's requests count against (a task's call keeps a place). */
    private readonly slots?: InFlightSlots,
    /** A virtual server's path (servers[]): the endpoint its requests came to; none, the main one. */
    private readonly endpoint?: string,
  ) {}

  /**
   * The request's method, `_meta`, params and mirrored headers, checked in that order; throws
   * the GatewayError to answer with. `header` reads the request's headers.
   */
  admit(message: JsonRpcRequest, header: HeaderLookup): StatelessMeta {
    if (!STATELESS_METHODS.has(message.method))
      throw new GatewayError('MODERN_METHOD_NOT_FOUND', `Method not found: ${message.method}`);
    const meta = readStatelessMeta(message, header);
    const problem = paramsProblem(message.method, message.params);
    if (problem) throw new GatewayError('INVALID_PARAMS', `Invalid params: ${problem}`);
    if (message.method === 'tools/call' && typeof message.params?.name === 'string') {
      checkMirroredParams(message.params.arguments, this.handler.mirroredParams(message.params.name), header);
    }
    return meta;
  }

  /** A fresh scope for one stateless request (its ids are unique only within it). */
  newScope(): string {
    return this.#scopePrefix + this.#nextScope++;
  }

  /** The RequestContext of a stateless request: read from its `_meta`, answered on `sink`. */
  context(
    meta: StatelessMeta,
    principal: string | undefined,
    mayCall: ((tool: string) => boolean) | undefined,
    scope: string,
    sink: MessageSink,
    http?: HttpOrigin,
    caller?: Caller,
    remoteAddress?: string,
  ): RequestContext {
    // Spelled out, not spread: one object shape for every request, built without a generic copy (the hot path).
    return {
      protocolVersion: meta.protocolVersion,
      clientCapabilities: meta.clientCapabilities,
      clientInfo: meta.clientInfo,
      principal,
      caller,
      mayCall,
      logLevel: meta.logLevel,
      stateless: true,
      scope,
      endpoint: this.endpoint,
      sink,
      sessionSink: undefined,
      // Without a principal a stateless request counts against no share (the pool's bounds apply).
      client: principal,
      slots: this.slots,
      remoteAddress,
      http,
    };
  }

  /**
   * subscriptions/listen: list changes the virtual server has, updates of the resources its
   * upstreams can watch, and the status of the client's tasks (`taskIds`, the tasks extension);
   * the acknowledgement names exactly those. `ctx` is the listener's (made with no reply sink);
   * `open` opens the SSE reply, once the acknowledgement is known. Rejects (nothing opened,
   * nothing followed) with the listen's error.
   */
  async listen(message: JsonRpcRequest, ctx: RequestContext, open: () => SseWriter): Promise<void> {
    const requested = isObject(message.params?.notifications) ? message.params.notifications : {};
    const honoured = honouredListChanges(requested, this.handler.capabilities(true));
    // The virtual server learns the stream's sink below; what it follows is known first, for the acknowledgement.
    let deliver: MessageSink | undefined;
    const sink: MessageSink = { send: (m) => deliver?.send(m) ?? false };
    const tasks = await this.handler.watchTasks(ctx, requested.taskIds, sink);
    if (tasks.length > 0) honoured.taskIds = tasks;
    let sse: SseWriter;
    try {
      const uris = this.handler.watchResources(ctx, requested.resourceSubscriptions, sink);
      if (uris.length > 0) honoured.resourceSubscriptions = uris;
      sse = open();
    } catch (err) {
      this.handler.releaseScope(ctx.scope);
      throw err;
    }
    deliver = this.listens.open(sse, message.id, honoured);
    sse.onClose(() => this.handler.releaseScope(ctx.scope));
  }
}
