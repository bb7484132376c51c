import { GatewayError } from '../../jsonrpc/errors.js';
import { isObject, parseMessages, type JsonRpcMessage } from '../../jsonrpc/messages.js';
import type { Abort } from '../../timing/abort.js';
import {
  headerValue,
  mediaType,
  retryAfterMs,
  type CallerAuth,
  type EndpointResponse,
  type HttpEndpoint,
} from './http-endpoint.js';
import { DeadlineTimer } from '../../timing/deadline-timer.js';
import { INITIALIZE } from '../connection/initialize.js';
import type { JsonRpcConnection } from '../connection/json-rpc-connection.js';
import { ExchangeFailure } from '../../contracts/exchange-failure.js';
import type { McpResult, UpstreamCall } from '../../contracts/upstream.js';
import { messageData, readSse } from './sse-reader.js';

/** The most of a 4xx body read for the JSON-RPC error it may hold. */
const RPC_ERROR_BYTES = 64 * 1024;

/**
 * Whether `text` holds the JSON-RPC error answering request `id` (then given to the connection, which settles the call
 * with it).
 */
function answeredWithError(connection: JsonRpcConnection, id: number, text: string): boolean {
  const error = parseMessages(text)?.find((m) => isObject(m) && 'error' in m && m.id === id);
  if (!error) return false;
  connection.receive(error);
  return !connection.has(id);
}

/** Once the answer is in, how long an SSE reply may take to end by itself before we cut it. */
const LINGER_MS = 1000;

/** Why an exchange was aborted when it was not a failure of the upstream (`error`: the caller's reason). */
export class Cancelled {
  constructor(readonly error: Error | undefined) {}
}
const ANSWERED = new Cancelled(undefined);

/** Which user each call in flight was sent for, by JSON-RPC id: its exchanges go with that user's token. */
export class CallersInFlight {
  readonly #byId = new Map<number, CallerAuth>();

  set(id: number, auth: CallerAuth): void {
    this.#byId.set(id, auth);
  }

  get(id: number): CallerAuth | undefined {
    return this.#byId.get(id);
  }

  /** Forgets the call's user once the call settles, however it ends. */
  forgetWhenSettled(call: { id: number; promise: Promise<unknown> }): void {
    const forget = () => void this.#byId.delete(call.id);
    call.promise.then(forget, forget);
  }
}

/**
 * What an HTTP wire returns for a call it sent: its user forgotten once it settles, and a cancel
 * that ends the call the wire's way (`end`) and aborts the exchange still carrying it.
 */
export function sentCall(
  call: { id: number; promise: Promise<McpResult> },
  auth: CallerAuth | undefined,
  callers: CallersInFlight,
  aborts: ReadonlyMap<number, Abort>,
  end: (error: Error) => void,
): UpstreamCall {
  if (auth) callers.forgetWhenSettled(call);
  return {
    promise: call.promise,
    cancel: (error) => {
      const abort = aborts.get(call.id);
      end(error);
      abort?.abort(new Cancelled(error));
    },
  };
}

export type Outcome =
  | { kind: 'done' }
  /** The upstream no longer knows the session the exchange used (`generation`: which one). */
  | { kind: 'session-lost'; generation: number }
  /** The SSE reply ended before the answer; `lastEventId` names where to resume, when it can be. */
  | { kind: 'cut'; lastEventId: string | undefined; retryMs: number | undefined; progressed: boolean }
  | { kind: 'failed'; failure: ExchangeFailure | GatewayError };

/** What an exchange that threw failed with: the failure as thrown, or anything else as a failure once sent. */
export function failureOf(err: unknown): ExchangeFailure | GatewayError {
  return err instanceof GatewayError || err instanceof ExchangeFailure ? err : new ExchangeFailure('sent', String(err));
}

export interface ExchangeRequest {
  endpoint: HttpEndpoint;
  connection: JsonRpcConnection;
  message: JsonRpcMessage;
  /** Our id when `message` is a request (its answer is owed on this reply). */
  id: number | undefined;
  method: string | undefined;
  /** The session's headers; none for initialize. */
  sessionHeaders: Record<string, string>;
  generation: number;
  /** Resume the reply stream after this event id (a GET) instead of POSTing `message`. */
  resumeFrom: string | undefined;
  abort: Abort;
  /** A call made for a user: sent as them. */
  caller?: CallerAuth | undefined;
  /**
   * A JSON-RPC error answered with a 4xx status is the answer (2026-07-28 servers send their
   * errors so): it reaches the caller as the upstream's error, not as a failed exchange.
   */
  errorsWithStatus?: boolean;
  /** 2026-07-28: log messages on a request's reply are that request's (connection.receive's `replyOf`). */
  logsOnReply?: boolean;
  /**
   * A 4xx status (not 429) says what the upstream does not speak, not that it is unwell
   * (server/discover to a 2025 server, which `auto` then initializes): the breaker hears an answer.
   */
  refusalAnswers?: boolean;
  /** The Mcp-Session-Id an initialize reply carries. */
  onSessionId(sessionId: string | undefined): void;
}

/**
 * One HTTP exchange of a Streamable HTTP session: the POST of one message, or the GET that
 * resumes its reply. What comes back (a JSON body, or the events of an SSE reply) goes into
 * the connection; the outcome says what the caller must do next. Each failure is reported to
 * the circuit breaker once: connection failures by the endpoint, the rest here.
 */
export async function exchange(req: ExchangeRequest): Promise<Outcome> {
  const { endpoint, abort, resumeFrom } = req;
  const { timeoutMs, maxTimeoutMs } = endpoint.config;
  const timer = new DeadlineTimer(timeoutMs, maxTimeoutMs, (hard) =>
    abort.abort(
      new ExchangeFailure(
        'timeout',
        hard ? `no answer within the hard limit of ${maxTimeoutMs} ms` : `no answer within ${timeoutMs} ms`,
      ),
    ),
  );
  try {
    let res: EndpointResponse;
    try {
      res = await endpoint.request(
        resumeFrom !== undefined
          ? {
              method: 'GET',
              url: endpoint.url,
              headers: { accept: 'text/event-stream', 'last-event-id': resumeFrom, ...req.sessionHeaders },
              abort,
              caller: req.caller,
            }
          : {
              method: 'POST',
              url: endpoint.url,
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                ...req.sessionHeaders,
                ...traceHeaders(req.message),
              },
              body: JSON.stringify(req.message),
              abort,
              caller: req.caller,
            },
      );
    } catch (err) {
      // Connection failures were counted by the endpoint; an abort is judged below.
      if (abort.aborted) throw err;
      return { kind: 'failed', failure: err as ExchangeFailure | GatewayError };
    }
    timer.touch();
    return await onReply(req, res, timer);
  } catch (err) {
    const reason: unknown = abort.aborted ? abort.reason : err;
    if (reason instanceof Cancelled) {
      // A caller that timed out says as much about the upstream as our own timer would.
      if (reason.error instanceof GatewayError && reason.error.type === 'UPSTREAM_TIMEOUT')
        endpoint.breaker.failure(reason.error.message);
      return { kind: 'done' };
    }
    const failure =
      reason instanceof ExchangeFailure
        ? reason
        : new ExchangeFailure(
            'sent',
            `connection broke while reading the answer (${reason instanceof Error ? reason.message : String(reason)})`,
          );
    if (failure.countsAsFailure) endpoint.breaker.failure(failure.message);
    return { kind: 'failed', failure };
  } finally {
    timer.clear();
  }
}

/** An HTTP error status: a failure the breaker counts (thrown), or with `refusalAnswers` a 4xx that is an answer. */
function refused(req: ExchangeRequest, failure: ExchangeFailure): Outcome {
  const status = failure.status ?? 0;
  if (!req.refusalAnswers || status < 400 || status >= 500 || status === 429) throw failure;
  req.endpoint.breaker.success();
  return { kind: 'failed', failure };
}

async function onReply(req: ExchangeRequest, res: EndpointResponse, timer: DeadlineTimer): Promise<Outcome> {
  const { endpoint, connection, id } = req;
  const { breaker } = endpoint;
  if (res.status === 202 || res.status === 204) {
    await res.body.dump();
    if (id !== undefined)
      throw new ExchangeFailure('protocol', `answered a request with HTTP ${res.status} and no response`);
    breaker.success();
    return { kind: 'done' };
  }
  if (res.status < 200 || res.status >= 300) {
    if (
      req.errorsWithStatus &&
      id !== undefined &&
      res.status >= 400 &&
      res.status < 500 &&
      res.status !== 429 &&
      mediaType(res.headers) === 'application/json'
    ) {
      const text = await res.body.text(RPC_ERROR_BYTES, () => timer.touch());
      if (answeredWithError(connection, id, text)) {
        breaker.success();
        return { kind: 'done' };
      }
      const message = `answered HTTP ${res.status}: ${text.slice(0, 300).replace(/\s+/g, ' ')}`;
      return refused(req, new ExchangeFailure('status', message, res.status, retryAfterMs(res.headers)));
    }
    const text = await res.body.snippet();
    // 404 is the spec's "session gone"; servers built on the SDK's examples say 400 "No valid session ID".
    if (
      req.sessionHeaders['mcp-session-id'] !== undefined &&
      (res.status === 404 || (res.status === 400 && /session/i.test(text)))
    ) {
      breaker.success();
      return { kind: 'session-lost', generation: req.generation };
    }
    const message = `answered HTTP ${res.status}${text ? `: ${text}` : ''}`;
    return refused(req, new ExchangeFailure('status', message, res.status, retryAfterMs(res.headers)));
  }
  if (id === undefined) {
    // A notification or an answer of ours was taken (the spec says 202; any 2xx will do).
    await res.body.dump();
    breaker.success();
    return { kind: 'done' };
  }
  if (req.method === INITIALIZE) req.onSessionId(headerValue(res.headers, 'mcp-session-id'));
  const type = mediaType(res.headers);
  if (type === 'application/json') {
    const text = await res.body.text(undefined, () => timer.touch());
    const messages = parseMessages(text);
    if (!messages)
      throw new ExchangeFailure('protocol', `answered with a body that is not JSON (${text.slice(0, 100)})`);
    for (const m of messages) connection.receive(m, req.logsOnReply ? id : undefined);
    if (connection.has(id))
      throw new ExchangeFailure('protocol', 'answered without a JSON-RPC response to the request');
    breaker.success();
    return { kind: 'done' };
  }
  if (type !== 'text/event-stream')
    throw new ExchangeFailure('protocol', `answered with content type "${type || '(none)'}"`);
  // It answered like an MCP server; what its stream does next is judged as it goes.
  breaker.success();
  return readSseReply(req, res, timer);
}

async function readSseReply(req: ExchangeRequest, res: EndpointResponse, timer: DeadlineTimer): Promise<Outcome> {
  const { connection, id, abort } = req;
  let lastEventId: string | undefined;
  let retryMs: number | undefined;
  let progressed = false;
  let linger: NodeJS.Timeout | undefined;
  try {
    await readSse(res.body, {
      onActivity: () => timer.touch(),
      onRetry: (ms) => {
        retryMs = ms;
      },
      onEvent: (event) => {
        if (event.id !== undefined) lastEventId = event.id;
        const data = messageData(event);
        if (data === undefined) return;
        const messages = parseMessages(data);
        if (!messages)
          throw new ExchangeFailure('protocol', `sent an SSE event that is not JSON (${data.slice(0, 100)})`);
        progressed = true;
        for (const m of messages) connection.receive(m, req.logsOnReply ? id : undefined);
        if (id !== undefined && !connection.has(id) && linger === undefined) {
          linger = setTimeout(() => abort.abort(ANSWERED), LINGER_MS);
          linger.unref();
        }
      },
    });
  } catch (err) {
    if (abort.aborted || err instanceof ExchangeFailure) throw err;
    // The stream broke; whether that matters depends on whether the answer is still owed.
  } finally {
    clearTimeout(linger);
  }
  if (id !== undefined && connection.has(id)) return { kind: 'cut', lastEventId, retryMs, progressed };
  return { kind: 'done' };
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** W3C Trace Context: version-traceid-parentid-flags, lower-case hex. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** Printable ASCII, at most the 512 characters W3C asks propagators to keep. */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/**
 * The W3C trace context a request carries in `params._meta` (put there by the gateway when
 * tracing is on), also as HTTP headers: what an HTTP-instrumented upstream reads. Only in the
 * standard's shape: a client's `_meta` may say anything, and a header the upstream refuses
 * would count against it in the circuit breaker, for every client.
 */
function traceHeaders(message: JsonRpcMessage): Record<string, string> {
  const meta = (message as { params?: { _meta?: unknown } }).params?._meta;
  if (typeof meta !== 'object' || meta === null) return NO_HEADERS;
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return NO_HEADERS;
  return typeof tracestate === 'string' && TRACESTATE.test(tracestate) ? { traceparent, tracestate } : { traceparent };
}
