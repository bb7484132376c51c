import type { JsonRpcId, JsonRpcMessage } from '../jsonrpc/messages.js';

/** Where messages related to one client request go (the POST's SSE reply, or a session stream). */
export interface MessageSink {
  /** false when the stream is gone and the message was not delivered. */
  send(message: JsonRpcMessage): boolean;
}

/** A sink that delivers nothing: for a request whose related messages have nowhere to go. */
export const NO_SINK: MessageSink = { send: () => false };

/** A client's share of requests in flight on this replica (limits.maxInFlightPerClient), as its transport counts it. */
export interface InFlightSlots {
  /** One more place of `client`, past the limit too: only for a request that holds one (a task's call keeps it on). */
  keep(client: string): void;
  release(client: string | undefined): void;
}

export interface ClientInfo {
  name: string;
  version: string;
  [key: string]: unknown;
}

/**
 * Everything the virtual server needs to know about who asks and how to answer. The transport
 * builds it per request: a 2025 request reads it from its session, a stateless (2026-07-28)
 * request from its own `_meta`. Nothing below the transport looks up sessions.
 */
export interface RequestContext {
  readonly protocolVersion: string;
  /**
   * A 2026-07-28 (or later) request: no session behind it, results shaped for that era
   * (resultType, serverInfo in `_meta`, cache hints), no requests back to the client.
   */
  readonly stateless: boolean;
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  readonly clientInfo: ClientInfo | undefined;
  /** With auth on: who asks (the token's issuer and subject). */
  readonly principal?: string | undefined;
  /**
   * With auth on: the caller as an upstream that acts for users needs it (its claims, and its
   * validated token as the input of a token exchange: never sent to an upstream itself).
   */
  readonly caller?: Caller | undefined;
  /** With per-tool scopes: whether this client may call a tool (tools/list leaves out the rest). */
  readonly mayCall?: ((tool: string) => boolean) | undefined;
  /**
   * Names the space in which the client's request ids are unique (the session id for 2025
   * clients, a per-request token for stateless ones): cancellation looks requests up by it.
   */
  readonly scope: string;
  /**
   * The least severe log level the client asked to hear: a 2025 session's logging/setLevel, a
   * 2026-07-28 request's `_meta` logLevel. None: no log messages from 2026-07-28 upstreams.
   */
  readonly logLevel?: string | undefined;
  /** A 2025 session's logging/setLevel: kept in its record, for its next requests on any replica. */
  readonly setLogLevel?: ((level: string) => Promise<void>) | undefined;
  /** A 2025 session's found tools (tool search's `expose: list_changed`), from its record. */
  readonly foundTools?: readonly string[] | undefined;
  /** Replaces the session's found tools: kept in its record, for its next requests on any replica. */
  readonly setFoundTools?: ((names: readonly string[]) => Promise<void>) | undefined;
  /**
   * The virtual server (servers[]) the request came to, by its path: a 2025 session's (it is
   * usable there only) or a stateless request's. Undefined: the main endpoint. What an upstream's
   * asks during the request, and a task it makes, take that server's interceptors by.
   */
  readonly endpoint?: string | undefined;
  /** The stream of this request's reply. */
  readonly sink: MessageSink;
  /** The client's stream for messages unrelated to any request (a 2025 session's GET stream). */
  readonly sessionSink: MessageSink | undefined;
  /**
   * Whose share of requests in flight this request counts against (its session, the principal
   * of a stateless one; undefined: none), and that share: a task's call keeps a place of it
   * until the call ends, as the same call made plainly would.
   */
  readonly client?: string | undefined;
  readonly slots?: InFlightSlots | undefined;
  /**
   * The TCP peer (behind a proxy, the proxy's) of a stateless request or a Streamable HTTP session's POST: all that
   * tells one anonymous client's tasks (stateless) or rate-limit counters from another's.
   */
  readonly remoteAddress?: string | undefined;
  /** The HTTP request this one came in (its id and trace headers); undefined off HTTP. */
  readonly http?: HttpOrigin | undefined;
  /**
   * How long an upstream's requests that come together are gathered into one input_required
   * round (default 10 ms). A task's client polls, so it loses nothing when this is longer, and
   * a loaded machine cannot split one Promise.all of questions into two rounds.
   */
  readonly inputGatherMs?: number;
}

/** What the HTTP request says that logs and traces carry on (never used to decide anything). */
export interface HttpOrigin {
  /** x-request-id as sent (when safe), or one made up: on every log line of the request. */
  readonly requestId: string;
  /** The W3C trace context headers, as sent (tracing checks them). */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
}

export type RequestKey = `${string}\u0000${string}`;

export function requestKey(scope: string, id: JsonRpcId): RequestKey {
  return `${scope}\u0000${typeof id === 'number' ? `n${id}` : `s${id}`}`;
}

/**
 * A client's validated access token. It leaves the gateway only as the `subject_token` of an
 * RFC 8693 exchange: printed, logged or serialized it shows nothing.
 */
export class SubjectToken {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The token itself, for the token endpoint's form and nothing else. */
  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'SubjectToken [redacted]';
  }
}

/** Who a request comes from, for upstreams that act for users: the principal, its token's claims, the token. */
export interface Caller {
  readonly principal: string;
  readonly claims: Readonly<Record<string, unknown>>;
  readonly token: SubjectToken;
  /** The 2025 session a call came from: where a URL elicitation's completion is announced. */
  readonly session?: string;
}
