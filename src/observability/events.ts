/**
 * What the data path tells the world, as `diagnostics_channel` events (as undici and pino do):
 * metrics, the audit log and (next) tracing subscribe; the data path imports no metrics module
 * and calls no logger for them. One channel per kind of event, named `mcpgw:<area>:<event>`.
 *
 * Channels are process-wide, and tests run several gateways in one process: every message
 * carries its gateway's id, and each gateway's subscribers take only their own. A publisher
 * holds a DataPathEvents for its gateway; a publish with no subscriber costs one boolean test.
 */
import { channel, type Channel } from 'node:diagnostics_channel';

/**
 * A request reaching the virtual server, published only when someone subscribes (tracing):
 * the same object comes back as `start` in its request:end and in its upstream calls, so a
 * subscriber can key what it keeps (a span) by it without threading anything through calls.
 */
export interface RequestStart {
  /** Bounded like RequestEnd.method. */
  method: string;
  /** A low-cardinality span target: the tool or prompt name from the catalog; else ''. */
  target: string;
  /** The 2025 session; undefined for stateless requests. */
  sessionId: string | undefined;
  protocolVersion: string;
  /** The JSON-RPC id, as a string. */
  jsonrpcId: string;
  /** resources/read and the like: the URI as the client sent it (an attribute, never a span name). */
  resourceUri: string | undefined;
  /** W3C trace context the client sent: `params._meta` first (SEP-414), then the HTTP headers. */
  traceparent: string | undefined;
  tracestate: string | undefined;
}

/**
 * One call the gateway makes to an upstream for a client request. A subscriber may fill
 * `traceparent`/`tracestate` while it is published: the caller sends them on in the call's
 * `params._meta` (and an HTTP upstream's wire copies them into its headers).
 */
export interface UpstreamCallStart {
  upstream: string;
  method: string;
  target: string;
  /** `pipe` (stdio) or `tcp` (HTTP), as OTel's network.transport. */
  transport: string;
  request: RequestStart | undefined;
  traceparent?: string;
  tracestate?: string;
}

export interface UpstreamCallEnd {
  upstream: string;
  method: string;
  /** tools/call: the tool's name as clients see it; else ''. */
  tool: string;
  /** prompts/get: the prompt's name as clients see it; else ''. */
  prompt: string;
  /** '' on success, `tool_error` for isError results, else the JSON-RPC code as a string (bounded). */
  errorType: string;
  transport: string;
  seconds: number;
  /** The call's upstream:call-start message, when anyone heard it. */
  start: UpstreamCallStart | undefined;
  /** Who the call is for, as rate limits and quotas name it (rate-limit/request-facts.ts's requester). */
  who: string;
}

/**
 * A notification that passed through the gateway (tracing hears it): one a client sent, or one
 * an upstream sent on its way to a client. Published only when someone subscribes.
 */
export interface NotificationPassed {
  /** A client's: bounded like RequestStart.method; an upstream's: a server notification of the spec, else `_other`. */
  method: string;
  /** The upstream that sent it; undefined: a client did. */
  upstream: string | undefined;
  /** OTel's network.transport of the side it came from: `tcp` for a client, `pipe` or `tcp` for an upstream. */
  transport: string;
  /** The 2025 session it came from or goes to; undefined for stateless clients. */
  sessionId: string | undefined;
  /** The client's protocol version. */
  protocolVersion: string | undefined;
  /**
   * The W3C context it continues: its own `params._meta` (SEP-414), else for an upstream's the
   * call it is part of (upstream:call-start's), for a client's the POST's headers.
   */
  traceparent: string | undefined;
  tracestate: string | undefined;
  /** An upstream's: whether a client's stream took it (else it was dropped). */
  delivered: boolean;
}

/** A request the virtual server answered (result or error). */
export interface RequestEnd {
  method: string;
  /** tools/call: the tool's name as clients see it, when the catalog has it; else ''. */
  tool: string;
  /** '' on success; the error table's name, or an upstream's code. */
  errorType: string;
  seconds: number;
  principal: string | undefined;
  /** The session (2025) or the request's own scope (stateless). */
  scope: string;
  stateless: boolean;
  /** The tool or prompt name, or the resource URI, as the client sent it. */
  target: string | undefined;
  /** A tool ran and reported its own failure (`isError: true`). */
  toolError: boolean;
  /** '' on success; else the JSON-RPC error code as a string (upstream codes bounded). */
  errorCode: string;
  /** prompts/get: the prompt's name when the catalog has it; else ''. */
  prompt: string;
  /** Bounded to the versions this gateway speaks (else `_other`). */
  protocolVersion: string;
  /** The HTTP request's id (x-request-id), for the audit line; undefined off HTTP. */
  requestId: string | undefined;
  /** This request's request:start, when anyone heard it. */
  start: RequestStart | undefined;
}

/** One HTTP request on the MCP endpoint, once the transport knows what it carries (the access log). */
export interface HttpClassified {
  /** The Node request (a key only: nothing reads it). */
  request: object;
  /** `request`, `notification`, `response`, `batch` or `stream` (a GET). */
  type: string;
  /** The JSON-RPC method of a lone request or notification. */
  method: string | undefined;
  principal: string | undefined;
}

export interface EventMap {
  'request:start': RequestStart;
  'request:end': RequestEnd;
  'upstream:call-start': UpstreamCallStart;
  'upstream:call-end': UpstreamCallEnd;
  'http:classified': HttpClassified;
  notification: NotificationPassed;
  /**
   * A 2025 session (any client transport) ended after `seconds`: DELETE, its connection closed
   * (legacy HTTP+SSE, WebSocket), unused for the ttl, or evicted at a session limit. Once per session.
   */
  'session:end': { seconds: number; cause: 'deleted' | 'closed' | 'expired' | 'evicted' };
  /** The transport refused a request before the virtual server saw it. */
  'transport:rejection': { errorType: string };
  'stream:open': { kind: string };
  'stream:close': { kind: string };
  'stream:resumption': { outcome: string };
  'stream:failure': { component: string; operation: string };
  /** A stream's reader left more than limits.maxStreamBufferedBytes unsent: the stream was cut off. */
  'stream:cut-off': { kind: string };
  'connection:refused': Record<string, never>;
  'token:introspection': { outcome: string };
  'upstream:workers': { upstream: string; count: number };
  'upstream:restart': { upstream: string };
  'upstream:start-failure': { upstream: string };
  'upstream:stdout-garbage': { upstream: string };
  'upstream:retry': { upstream: string; reason: string };
  'upstream:circuit': { upstream: string; state: (typeof CIRCUIT_STATES)[number] };
  'pool:queue': { upstream: string; depth: number };
  'pool:rejection': { upstream: string; reason: string };
  /** upstreams[].fairness: calls waiting for their principal's share of an upstream (all principals together). */
  'fairness:queue': { upstream: string; depth: number };
  /** A call past its principal's share: `queued` waits, `refused` met a full queue (FAIRNESS_QUEUE_FULL). */
  'fairness:wait': { upstream: string; outcome: 'queued' | 'refused' };
  /** A rule of rateLimits refused a request message. */
  'rate:limited': { rule: string };
  /** The rate-limit counter store failed or was late: the request was admitted or refused (onStoreError). */
  'rate:store-error': { outcome: 'allowed' | 'denied' };
  /** A quota of `quotas` refused a tool call (QUOTA_EXCEEDED). */
  'quota:exceeded': { quota: string };
  /** The quota counter store failed or was late: the call was admitted or refused (quotas.onStoreError). */
  'quota:store-error': { outcome: 'allowed' | 'denied' };
  /** A config reload ended: `ok` applied (restart-only keys aside), `rejected` changed nothing. */
  'config:reload': { outcome: 'ok' | 'rejected' };
  /** search_tools answered on an endpoint (its path): `empty` found nothing the caller may call. */
  'tool-search:search': { endpoint: string; outcome: 'hit' | 'empty' };
  /** call_tool passed a call on (the call itself ends as a tools/call of the real tool). */
  'tool-search:call': { endpoint: string };
  /** A tool search index was made: built here, or loaded as another process kept it (Redis). */
  'tool-search:index': { origin: 'built' | 'loaded' };
  /** One interceptor ran on one message (config interceptors); `kinds`: what it found, never the text. */
  'guardrail:verdict': {
    interceptor: string;
    phase: 'request' | 'response';
    method: string;
    verdict: string;
    kinds: readonly string[];
    seconds: number;
    requestId: string | undefined;
    principal: string | undefined;
  };
  /** The result cache (`cache:`) was asked for a kept upstream result: `hit` answered it, `miss` went upstream. */
  'cache:lookup': { upstream: string; method: string; outcome: 'hit' | 'miss' };
  /** The result cache dropped its least recently used entry to stay within cache.maxBytes. */
  'cache:eviction': { upstream: string };
  /** The authorization policy decided one request (gateway/policy-step.ts); `policies`: the ids that decided. */
  'policy:decision': {
    action: string;
    method: string;
    /** The tool or prompt name, or the resource URI, as the endpoint names it; '' for a list or task operation. */
    target: string;
    allowed: boolean;
    policies: readonly string[];
    seconds: number;
    requestId: string | undefined;
    principal: string | undefined;
  };
  /** A tool or prompt definition the pin lock does not pin (gateway/pin-policy.ts), once per definition. */
  'pin:finding': {
    upstream: string;
    kind: 'tools' | 'prompts';
    name: string;
    verdict: 'TOOL_DEFINITION_CHANGED' | 'TOOL_NOT_PINNED';
    mode: 'warn' | 'enforce';
  };
}

export type EventName = keyof EventMap;

/** The states `upstream:circuit` reports (a remote upstream's circuit breaker). */
export const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const;

/** Every message on a channel: the event's own fields and the gateway that published it. */
export type Published<K extends EventName> = EventMap[K] & { gateway: string };

const channels = new Map<EventName, Channel>();

/** The process-wide channel of one event kind (also for subscribers outside the gateway). */
export function eventChannel(name: EventName): Channel {
  let ch = channels.get(name);
  if (!ch) {
    ch = channel(`mcpgw:${name}`);
    channels.set(name, ch);
  }
  return ch;
}

/** One gateway's publisher: what the data path is handed instead of metrics. */
export class DataPathEvents {
  constructor(readonly gateway: string) {}

  /** Whether anyone hears `name`: a publisher tests it before it computes a costly message. */
  has(name: EventName): boolean {
    return eventChannel(name).hasSubscribers;
  }

  /**
   * Publishes `message` (a fresh object: it is handed over, not copied, and gains the gateway's
   * id) when anyone subscribes; without subscribers nothing is done but one boolean test.
   */
  emit<K extends EventName>(name: K, message: EventMap[K]): void {
    const ch = eventChannel(name);
    if (!ch.hasSubscribers) return;
    (message as Published<K>).gateway = this.gateway;
    ch.publish(message);
  }
}

/**
 * Subscribes `handlers` to this gateway's events (others' are skipped); returns the unsubscribe.
 */
export function subscribe(
  gateway: string,
  handlers: { [K in EventName]?: (message: EventMap[K]) => void },
): () => void {
  const undo: Array<() => void> = [];
  for (const name of Object.keys(handlers) as EventName[]) {
    const handler = handlers[name] as (message: unknown) => void;
    const listener = (message: unknown) => {
      if ((message as { gateway?: string }).gateway === gateway) handler(message);
    };
    const ch = eventChannel(name);
    ch.subscribe(listener);
    undo.push(() => ch.unsubscribe(listener));
  }
  return () => {
    for (const u of undo) u();
  };
}
