/**
 * The one error table. Every failure that reaches a client is one of these entries: a stable
 * name (sent as `error.data.type`), a JSON-RPC code and the HTTP status the transport uses when
 * the error is the whole reply. Add entries here; never build an error object elsewhere.
 *
 * Gateway codes live in -32000..-32019, the range MCP leaves to implementations
 * (2026-07-28 reserves -32020..-32099 for the spec itself, whose codes appear here only as
 * the spec defines them). -32002 is not ours: MCP 2025 uses it for "resource not found".
 */

export interface ErrorEntry {
  readonly code: number;
  readonly httpStatus: number;
  readonly message: string;
  /** Present when a client may retry the same request later (the error carries `data.retryAfterMs`). */
  readonly retryable?: true;
  /** In-band as a POST's only message, the reply is still `httpStatus`, with Retry-After (transport/post-reply.ts). */
  readonly statusWhenAlone?: true;
}

export const ERRORS = {
  // JSON-RPC / MCP spec codes
  PARSE_ERROR: { code: -32700, httpStatus: 400, message: 'Parse error' },
  INVALID_REQUEST: { code: -32600, httpStatus: 400, message: 'Invalid Request' },
  METHOD_NOT_FOUND: { code: -32601, httpStatus: 200, message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, httpStatus: 200, message: 'Invalid params' },
  INTERNAL_ERROR: { code: -32603, httpStatus: 500, message: 'Internal error' },
  RESOURCE_NOT_FOUND: { code: -32002, httpStatus: 200, message: 'Resource not found' },

  // 2026-07-28 (stateless) requests: the spec's own codes and statuses
  /** Unknown or removed method: 404 on a stateless request (in-band 200 for 2025 sessions). */
  MODERN_METHOD_NOT_FOUND: { code: -32601, httpStatus: 404, message: 'Method not found' },
  /** A stateless request without the `_meta` every request must carry. */
  MODERN_META_INVALID: {
    code: -32602,
    httpStatus: 400,
    message: 'Invalid params: request _meta is missing or malformed',
  },
  /** Resource not found, as 2026-07-28 spells it (-32002 is retired there). */
  MODERN_RESOURCE_NOT_FOUND: { code: -32602, httpStatus: 200, message: 'Resource not found' },
  HEADER_MISMATCH: { code: -32020, httpStatus: 400, message: 'Header mismatch' },
  /** The request needs a client capability its _meta does not declare (data.requiredCapabilities). */
  MISSING_CLIENT_CAPABILITY: { code: -32021, httpStatus: 400, message: 'Missing required client capability' },
  MODERN_UNSUPPORTED_VERSION: { code: -32022, httpStatus: 400, message: 'Unsupported protocol version' },
  /**
   * A requestState the gateway did not issue for this request and principal: tampered, replayed, expired or foreign.
   */
  REQUEST_STATE_INVALID: { code: -32602, httpStatus: 200, message: 'Invalid params: requestState is not valid' },

  // Transport-level rejections (the HTTP status is what the spec asks for)
  BATCH_NOT_SUPPORTED: {
    code: -32600,
    httpStatus: 400,
    message: 'Batch requests are not supported by this protocol version',
  },
  SESSION_ID_REQUIRED: { code: -32000, httpStatus: 400, message: 'Mcp-Session-Id header is required' },
  UNSUPPORTED_PROTOCOL_VERSION: { code: -32000, httpStatus: 400, message: 'Unsupported MCP-Protocol-Version' },
  NOT_ACCEPTABLE: { code: -32000, httpStatus: 406, message: 'Not Acceptable' },
  UNSUPPORTED_MEDIA_TYPE: {
    code: -32000,
    httpStatus: 415,
    message: 'Unsupported Media Type: Content-Type must be application/json',
  },
  PAYLOAD_TOO_LARGE: { code: -32000, httpStatus: 413, message: 'Payload Too Large' },
  METHOD_NOT_ALLOWED: { code: -32000, httpStatus: 405, message: 'Method Not Allowed' },
  // No route for this method and path (not an MCP endpoint, whose unserved methods are 405): its body is never read.
  ROUTE_NOT_FOUND: { code: -32000, httpStatus: 404, message: 'Not Found: no route for this method and path' },
  // Answered by the HTTP server before any route (see http/server-limits.ts): the request never got whole.
  REQUEST_TIMEOUT: { code: -32000, httpStatus: 408, message: 'Request Timeout: the request did not arrive in time' },
  HEADERS_TOO_LARGE: { code: -32000, httpStatus: 431, message: 'Request Header Fields Too Large' },
  STREAM_CONFLICT: { code: -32000, httpStatus: 409, message: 'A GET stream is already open for this session' },
  // Not 404: to a client, 404 means its session is gone and must be re-initialized.
  EVENT_ID_UNKNOWN: {
    code: -32000,
    httpStatus: 400,
    message: 'Last-Event-ID names no event this session can resume from',
  },
  // A plain GET on the WebSocket endpoint (no Upgrade: websocket).
  UPGRADE_REQUIRED: {
    code: -32000,
    httpStatus: 426,
    message: 'Upgrade Required: this endpoint speaks WebSocket (subprotocol mcp)',
  },
  SESSION_NOT_FOUND: { code: -32001, httpStatus: 404, message: 'Session not found' },
  ORIGIN_FORBIDDEN: { code: -32003, httpStatus: 403, message: 'Origin not allowed' },
  // A virtual server (servers[]) whose principals or requiredScopes leave this client out.
  SERVER_FORBIDDEN: { code: -32013, httpStatus: 403, message: 'Forbidden: this client may not use this server' },
  // GET <path>/server-card where <path> is no MCP endpoint (or a server a reload took away): told apart by data.type.
  SERVER_CARD_NOT_FOUND: {
    code: -32000,
    httpStatus: 404,
    message: 'Not Found: no MCP endpoint at this path, so no server card',
  },
  // A virtual server's path that a reload took out of the config.
  SERVER_NOT_FOUND: { code: -32601, httpStatus: 404, message: 'No virtual server at this path' },

  // Data-path failures (carried in a 200 reply: the transport worked, the call did not)
  UPSTREAM_UNAVAILABLE: { code: -32004, httpStatus: 200, message: 'Upstream unavailable', retryable: true },
  UPSTREAM_TIMEOUT: { code: -32005, httpStatus: 200, message: 'Upstream timed out' },
  OVERLOADED: { code: -32006, httpStatus: 200, message: 'Upstream overloaded, retry later', retryable: true },
  REQUEST_CANCELLED: { code: -32007, httpStatus: 200, message: 'Request cancelled' },
  UPSTREAM_PROTOCOL_ERROR: { code: -32008, httpStatus: 200, message: 'Upstream sent an invalid message' },
  /** A 2026-07-28 upstream answered input_required more rounds than `stateless.maxInputRounds` allows (it loops). */
  INPUT_ROUNDS_EXCEEDED: { code: -32008, httpStatus: 200, message: 'Upstream asked for input too many times' },
  SHUTTING_DOWN: { code: -32009, httpStatus: 503, message: 'Gateway is shutting down', retryable: true },
  SESSION_STORE_UNAVAILABLE: { code: -32010, httpStatus: 503, message: 'Session store unavailable', retryable: true },
  // The port is bound before the upstreams have started (health probes answer): until then, MCP requests wait.
  NOT_READY: { code: -32019, httpStatus: 503, message: 'Gateway is starting: retry shortly', retryable: true },
  UPSTREAM_CIRCUIT_OPEN: {
    code: -32011,
    httpStatus: 200,
    message: 'Upstream is failing; calls to it fail fast until it recovers',
    retryable: true,
  },
  // One client past limits.maxInFlightPerClient: the others keep their share of the workers.
  CLIENT_TOO_MANY_IN_FLIGHT: {
    code: -32015,
    httpStatus: 429,
    message: 'Too many requests in flight for this client',
    retryable: true,
  },
  // Past limits.maxBodyBytesPerSecondPerClient: one client's bodies cannot take the event loop every client shares.
  CLIENT_TOO_MANY_BYTES: {
    code: -32015,
    httpStatus: 429,
    message: 'This client sent more request bytes than its share; slow down',
    retryable: true,
  },
  // A rule of rateLimits (data.rule, data.retryAfterMs): in-band, 429 with Retry-After as a POST's only message.
  RATE_LIMITED: {
    code: -32015,
    httpStatus: 429,
    message: 'Rate limit reached; retry later',
    retryable: true,
    statusWhenAlone: true,
  },
  // Past upstreams[].fairness: this principal's calls fill its share and its queue (data.upstream, .retryAfterMs).
  FAIRNESS_QUEUE_FULL: {
    code: -32015,
    httpStatus: 429,
    message: "Too many calls waiting for this principal's share of the upstream; retry later",
    retryable: true,
    statusWhenAlone: true,
  },
  // A quota of `quotas` used up for this window (data.quota, .measure, .limit, .resetAt, .retryAfterMs).
  QUOTA_EXCEEDED: {
    code: -32015,
    httpStatus: 429,
    message: 'Quota used up; retry later',
    retryable: true,
    statusWhenAlone: true,
  },
  // Past limits.maxSessions every session is in use: a new one waits until one is idle long enough to make room.
  SESSION_LIMIT: {
    code: -32016,
    httpStatus: 503,
    message: 'The gateway holds its maximum of sessions; retry later',
    retryable: true,
  },
  // Past limits.maxSessionsPerPrincipal: one principal cannot take every session from the others.
  PRINCIPAL_SESSION_LIMIT: {
    code: -32017,
    httpStatus: 429,
    message: 'Too many sessions for this principal',
    retryable: true,
  },
  // Past limits.maxStreams: long-lived SSE streams (GET, resumed, listen) on this replica.
  STREAM_LIMIT: {
    code: -32018,
    httpStatus: 503,
    message: 'Too many open streams on this replica; retry later',
    retryable: true,
  },

  // Tasks (2025-11-25 experimental tasks; the 2026-07-28 tasks extension). Unknown, expired and
  // another principal's task ids are one error, as the spec has it: -32602, nothing told apart.
  TASK_NOT_FOUND: { code: -32602, httpStatus: 200, message: 'Failed to retrieve task: Task not found' },
  TASK_TTL_INVALID: {
    code: -32602,
    httpStatus: 200,
    message: 'Invalid params: task.ttl must be a non-negative integer of milliseconds',
  },
  TASK_CURSOR_INVALID: { code: -32602, httpStatus: 200, message: 'Invalid params: unknown tasks/list cursor' },
  /** 2025-11-25: tasks/cancel of a task already completed, failed or cancelled. */
  TASK_TERMINAL: { code: -32602, httpStatus: 200, message: 'Cannot cancel task: already in a terminal status' },
  /**
   * 2025-11-25 tool-level negotiation: a `task` on a tool without task support, or none on a tool that requires one.
   */
  TASK_NOT_SUPPORTED: { code: -32601, httpStatus: 200, message: 'This tool does not support task-augmented calls' },
  TASK_REQUIRED: { code: -32601, httpStatus: 200, message: 'Task augmentation required for this tool' },
  // Past tasks.maxPerPrincipal live tasks (as PRINCIPAL_SESSION_LIMIT for sessions), or tasks.maxBytesPerPrincipal
  // bytes of their records: data names the one reached.
  TASK_LIMIT: {
    code: -32017,
    httpStatus: 200,
    message: 'Too many tasks for this principal; retry when some have expired',
    retryable: true,
  },
  // Past limits.workerStartsPerMinute (per principal, else per session): the client's own churn, not a busy upstream
  // (OVERLOADED).
  WORKER_START_LIMIT: {
    code: -32017,
    httpStatus: 200,
    message: 'Too many per-session worker starts for this client; retry later',
    retryable: true,
  },
  /** A task's error when the replica running its call died (its heartbeat stopped). */
  TASK_REPLICA_LOST: { code: -32004, httpStatus: 200, message: 'The gateway replica running this task stopped' },

  // Pinned definitions (pinning: enforce): -32013 as SERVER_FORBIDDEN, the gateway refuses this call; data.upstream
  // and data.tool (or data.prompt) name it, never its definition. Until the lock pins it (mcpgw pin, a reload).
  TOOL_DEFINITION_CHANGED: {
    code: -32013,
    httpStatus: 200,
    message: 'This definition changed since it was pinned; calls are refused until the pin lock is updated',
  },
  // SEP-2640: a skill file whose bytes are not what its upstream's skills/list says (data.upstream, data.uri).
  SKILL_DIGEST_MISMATCH: {
    code: -32013,
    httpStatus: 200,
    message: "This skill file's content does not match the digest its upstream lists; the gateway refuses it",
  },
  TOOL_NOT_PINNED: {
    code: -32013,
    httpStatus: 200,
    message: 'This definition is not in the pin lock; calls are refused until it is pinned',
  },

  // Authorization (OAuth 2.1 bearer tokens): the reply carries a WWW-Authenticate challenge
  UNAUTHORIZED: { code: -32012, httpStatus: 401, message: 'Unauthorized: a valid bearer token is required' },
  INSUFFICIENT_SCOPE: { code: -32013, httpStatus: 403, message: 'Forbidden: the token lacks a required scope' },
  // Token introspection failed: not the token's fault, so not a 401.
  AUTHORIZATION_SERVER_UNAVAILABLE: {
    code: -32014,
    httpStatus: 503,
    message: 'The authorization server cannot check tokens right now',
    retryable: true,
  },

  // Identity towards upstreams (calls made as the user): one user's refusal, not the upstream's failure.
  // -32013 as INSUFFICIENT_SCOPE: a guardrail (config interceptors) refused what a call sent or got back;
  // data.interceptor, data.phase (request | response) and data.kinds say which and what kind, never the text.
  GUARDRAIL_BLOCKED: { code: -32013, httpStatus: 403, message: 'Refused by a guardrail' },
  // -32013 as GUARDRAIL_BLOCKED: an interceptor server with onError deny timed out, crashed or answered garbage;
  // data.interceptor, data.phase and data.reason (timeout | unavailable | protocol | too-large) say which and why.
  INTERCEPTOR_FAILED: {
    code: -32013,
    httpStatus: 403,
    message: 'Refused: an interceptor server failed',
    retryable: true,
  },
  // -32013 as INSUFFICIENT_SCOPE: the authorization policy (authorization.policyFile, Cedar) denied this request;
  // data.action, data.resource and data.policies (the ids of the forbids that decided; none: no permit matched).
  POLICY_DENIED: { code: -32013, httpStatus: 403, message: 'Denied by the authorization policy' },
  // -32013 as INSUFFICIENT_SCOPE: the caller may not do this; data.upstream and data.reason say where and why.
  UPSTREAM_IDENTITY_REFUSED: {
    code: -32013,
    httpStatus: 403,
    message: "The upstream's authorization server refused a token for this user",
  },
  // authorization-code: this user has not granted the gateway a token for the upstream yet. The spec's
  // URLElicitationRequiredError (2025-11-25; data.elicitations names the gateway's /oauth/start link);
  // a 2026-07-28 client gets the same link as an input_required result instead (stateless/url-elicitation.ts).
  URL_ELICITATION_REQUIRED: {
    code: -32042,
    httpStatus: 200,
    message: 'This upstream needs your authorization first: open the link to grant it',
  },
  // /oauth/callback (and /oauth/start) with a state the gateway did not issue, or one that was used or expired.
  OAUTH_STATE_INVALID: {
    code: -32602,
    httpStatus: 400,
    message: 'This authorization link is unknown, used or expired: call the tool again for a new one',
  },
  // /oauth/callback without a code (nor an error), or /oauth/tokens/<name> for an upstream without grant
  // authorization-code.
  OAUTH_REQUEST_INVALID: { code: -32602, httpStatus: 400, message: 'Invalid authorization request' },
  // /oauth/start's confirmation posted without the cookie and token of the page that browser was shown, or
  // /oauth/callback reached by a browser other than the one that confirmed: a link forwarded, or a forged post.
  OAUTH_CONSENT_INVALID: {
    code: -32602,
    httpStatus: 403,
    message: 'This authorization was not confirmed in this browser: open the link your own client gave you',
  },
  OAUTH_UPSTREAM_UNKNOWN: {
    code: -32602,
    httpStatus: 404,
    message: 'No upstream of that name takes authorizations from its users',
  },
  // A claim an upstream header is built from (`${claims.x}`) is missing or cannot be sent in a header.
  CLAIM_HEADER_INVALID: {
    code: -32602,
    httpStatus: 400,
    message: "A claim of the client's token cannot be sent as an upstream header",
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;
