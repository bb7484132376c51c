// What a client transport hands requests and notifications to: owned by neither the transports
// nor the gateway that implements it, so both import it from here and transport/ never reaches
// up into gateway/.
import type { JsonRpcId, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc/messages.js';
import type { HttpOrigin, MessageSink, RequestContext } from './request-context.js';
import type { McpResult } from './upstream.js';

/** A tool argument a 2026-07-28 client mirrors into an `Mcp-Param-{header}` header. */
export interface MirroredParam {
  header: string;
  /** Property names from the arguments object down to the value. */
  path: readonly string[];
}

/** What the transport needs from the virtual server: nothing about upstreams leaks through. */
export interface McpHandler {
  /** `http`, `principal` and `id` are for the request's metrics, audit line and span only. */
  initialize(
    params: Record<string, unknown> | undefined,
    http?: HttpOrigin,
    principal?: string,
    id?: JsonRpcId,
  ): { protocolVersion: string; result: McpResult };
  /** What the virtual server offers; `stateless`: to 2026-07-28 clients. */
  capabilities(stateless: boolean): Record<string, unknown>;
  /** The arguments of a tool that a 2026-07-28 client mirrors into Mcp-Param-* headers. */
  mirroredParams(tool: string): readonly MirroredParam[];
  /**
   * The catalog's name of the tool a client calls `name` here; undefined when this server offers
   * none by that name (a virtual server that does not select it). Whether it exists is the catalog's to say.
   */
  exposedTool(name: string): string | undefined;
  handleRequest(ctx: RequestContext, request: JsonRpcRequest): Promise<JsonRpcResponse>;
  handleNotification(ctx: RequestContext, notification: JsonRpcNotification): void;
  /** The client's answer to a request an upstream sent it. */
  handleResponse(ctx: RequestContext, response: JsonRpcResponse): void;
  /**
   * Resource updates for a stateless client's listen stream (`ctx.scope` is the stream's, and
   * `ctx` says who listens): the URIs it can follow, now subscribed upstream; updates go to
   * `sink` until the scope is released.
   */
  watchResources(ctx: RequestContext, uris: unknown, sink: MessageSink): string[];
  /**
   * Task status for a stateless client's listen stream (`taskIds`, the tasks extension): the
   * ids of the tasks it may read, followed on `sink` until the scope is released; rejects with
   * the listen's error (-32021 without the extension, too many ids).
   */
  watchTasks(ctx: RequestContext, taskIds: unknown, sink: MessageSink): Promise<string[]>;
  /** Ends everything in flight for a scope (a session was deleted or expired). */
  releaseScope(scope: string): void;
}
