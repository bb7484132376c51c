import type { JsonRpcNotification } from '../jsonrpc/messages.js';
import type { Caller } from './request-context.js';

/** What an upstream told us in its initialize result. */
export interface UpstreamServerInfo {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string; [key: string]: unknown };
  instructions?: string;
}

export type McpResult = Record<string, unknown>;

/**
 * The caching hints of a 2026-07-28 result: what an upstream's lists and reads carried, and what
 * the gateway puts on its own stateless results.
 */
export interface CacheHints {
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

export interface CallOptions {
  /**
   * Notifications the upstream relates to this call (progress). A progress token in the
   * call's `_meta` is replaced by one unique on this connection and restored on the way back,
   * so many clients can share one connection with colliding tokens.
   */
  onNotification?: (notification: JsonRpcNotification) => void;
  /**
   * Headers a 2026-07-28 upstream gets with this request beside the standard ones (the mirrored
   * `Mcp-Param-*` of a tools/call); other wires ignore them.
   */
  headers?: Readonly<Record<string, string>>;
  /** Who the call is for: an upstream that acts for users (token exchange, claim headers) calls as them. */
  caller?: Caller | undefined;
  /**
   * Whose share the call counts against (RequestContext.client): a pool's queue takes turns
   * between clients, so one client's backlog does not hold up the others' calls.
   */
  client?: string | undefined;
  /**
   * Whose a result the upstream marks `cacheScope: private` is (RequestContext.principal): the
   * result cache keeps it for them alone, and without one not at all.
   */
  principal?: string | undefined;
}

/** A call on a per-session worker, wherever it runs (it may cross to the replica that owns the worker). */
export interface PerSessionCallOptions extends CallOptions {
  /**
   * A stateless retry that carries `requestState`: it continues the call its input-required
   * chain is running instead of starting one. Upstreams never see it.
   */
  continuation?: boolean;
}

/** One request in flight on an upstream. */
export interface UpstreamCall {
  readonly promise: Promise<McpResult>;
  /** Tells the upstream (notifications/cancelled) and rejects the promise with `error`. */
  cancel(error: Error): void;
}

/**
 * One connection to an MCP server: a child process or a remote session. The pool owns many of
 * these; nothing here knows about HTTP clients or gateway sessions.
 */
export interface UpstreamConnection {
  readonly label: string;
  readonly inFlight: number;
  /**
   * What its unanswered calls' requests weigh, where one call waits behind those before it
   * (a child's stdin); 0 where calls do not queue on the connection (HTTP).
   */
  readonly pendingBytes: number;
  readonly info: UpstreamServerInfo | undefined;
  start(): Promise<UpstreamServerInfo>;
  /**
   * Starts what can start before the client is known (a process and its runtime), so that a
   * later start() only initializes. Absent where there is nothing to start ahead (HTTP).
   */
  prewarm?(): void;
  call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall;
  /** Stops the connection and everything it started; pending calls fail at once. */
  close(): Promise<void>;
  /** Fires once, when the connection ends for any reason other than close(). */
  onExit(listener: (reason: string) => void): void;
  /** Fires after every call settles, so the pool can hand out the freed slot. */
  onCallSettled(listener: () => void): void;
}

/** The identity the gateway presents to upstreams it initializes itself. */
export interface ClientIdentity {
  clientInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
  protocolVersion: string;
  /**
   * A per-session worker of a client with auth on: its user (`forUser`), and, when this replica
   * has their validated token, the caller. An upstream that acts for users opens such a worker,
   * and sends everything on it, as that user; never as the gateway.
   */
  forUser?: boolean;
  caller?: Caller;
}

/**
 * The client side of an upstream connection: where the requests an upstream sends its client
 * (sampling, elicitation, roots) and its unrelated notifications (logging, list_changed) go.
 */
export interface UpstreamPeer {
  /** `signal` aborts when the worker that asked stops: the request ends then, answered or not. */
  request(method: string, params: Record<string, unknown> | undefined, signal?: AbortSignal): Promise<McpResult>;
  notification(notification: JsonRpcNotification): void;
}

/** What it takes to continue an upstream session without a new initialize. */
export interface UpstreamResumeState {
  sessionId: string;
  info: UpstreamServerInfo;
}

/**
 * Remembers a per-session worker's upstream session (an HTTP `Mcp-Session-Id`) beside the
 * client's session, so the replica that re-creates the worker after its owner died continues
 * the same upstream session instead of starting a new one.
 */
export interface UpstreamSessionMemory {
  recall(): Promise<UpstreamResumeState | undefined>;
  /** undefined: the upstream session ended; the next worker starts a new one. Settles (never rejects) once recorded. */
  remember(state: UpstreamResumeState | undefined): Promise<void>;
}
