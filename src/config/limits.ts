/** Bounds on what clients may hold or send (`limits`) and on the size of list replies (`pagination`). */
import type { FromSchema } from 'json-schema-to-ts';

export const limitsSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Bounds on what a client may send or hold: see docs/limits-and-errors.md.',
  properties: {
    bodyBytes: {
      type: 'integer',
      minimum: 1024,
      default: 4 * 1024 * 1024,
      description:
        'Larger POST bodies get 413 PAYLOAD_TOO_LARGE; a larger WebSocket frame closes the connection (1009).',
    },
    // MCP messages nest a few levels; thousands make recursive consumers overflow their stack.
    maxJsonDepth: {
      type: 'integer',
      minimum: 8,
      maximum: 1000,
      default: 64,
      description: 'Deeper nesting of objects and arrays in a body gets 400 INVALID_REQUEST (-32600).',
    },
    maxBatchSize: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: 100,
      description: 'More messages in one batch get 400 INVALID_REQUEST (batches exist only in 2025-03-26 sessions).',
    },
    maxBodyBytesPerSecondPerClient: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description:
        'Bytes of POST bodies (Streamable HTTP and legacy /messages) and WebSocket frames one client may send ' +
        'per second on a replica, in bursts of up to 4 s of it (at least one body of bodyBytes); past it a body ' +
        'gets 429 CLIENT_TOO_MANY_BYTES with Retry-After, before it is read (Content-Length) or parsed, and a ' +
        'WebSocket is read no further until the share allows (paced, nothing refused). A client is ' +
        'its principal with auth on, else its remote address: off by default, as behind a proxy every client ' +
        'shares one. 0: off.',
    },
    maxInFlightPerClient: {
      type: 'integer',
      minimum: 0,
      default: 64,
      description:
        'Requests one client may have in flight on a replica: per session, or per principal of stateless requests ' +
        "(so only with auth on), a task's running call included; the next gets 429 CLIENT_TOO_MANY_IN_FLIGHT " +
        '(never a tasks/cancel). 0: no limit.',
    },
    maxSessions: {
      type: 'integer',
      minimum: 1,
      default: 100_000,
      description:
        'Sessions at once. Memory store: per replica; Redis: across all replicas. At the limit the least recently ' +
        'used session idle for sessionEvictionIdleSeconds makes room, else 503 SESSION_LIMIT. A session is about ' +
        '300 B in memory.',
    },
    maxSessionsPerPrincipal: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description:
        'Sessions one principal may hold (auth on); at the limit its own least recently used idle session makes ' +
        'room, else 429 PRINCIPAL_SESSION_LIMIT. 0: no limit.',
    },
    sessionEvictionIdleSeconds: {
      type: 'integer',
      minimum: 0,
      default: 60,
      description: 'At a session limit, the least recently used session makes room if it has been idle this long.',
    },
    maxStreams: {
      type: 'integer',
      minimum: 1,
      default: 10_000,
      description:
        'Long-lived SSE streams (GET, resumed, listen) per replica; the next gets 503 STREAM_LIMIT. Legacy ' +
        'HTTP+SSE streams count apart; WebSockets do not count.',
    },
    maxStreamBufferedBytes: {
      type: 'integer',
      minimum: 1024,
      default: 4 * 1024 * 1024,
      description:
        'Bytes written to one stream (any SSE reply or stream, legacy included, and WebSocket) that its reader has ' +
        'not taken yet: a client that stops reading would otherwise hold gateway memory without end. Checked ' +
        'before each message (one larger message still goes out); past it the stream is cut off ' +
        '(mcpgw_streams_cut_off_total).',
    },
    workerStartsPerMinute: {
      type: 'integer',
      minimum: 0,
      default: 60,
      description:
        'Per-session workers one client may start a minute on a replica (its principal with auth on, else its ' +
        'session; anonymous stateless requests are not counted); past it WORKER_START_LIMIT. Each start is a ' +
        'process start (about 0.3 s of CPU for a Node server), so session churn must not become process churn that ' +
        "also evicts other clients' workers at pool.max. 0: no limit.",
    },
  },
  required: [],
  default: {},
} as const;

export const paginationSchema = {
  type: 'object',
  additionalProperties: false,
  description: "The gateway's own cursors over its merged lists.",
  properties: {
    pageSize: {
      type: 'integer',
      minimum: 1,
      maximum: 10000,
      default: 500,
      description:
        'Entries per page of the merged lists (tools, prompts, resources, resource templates) and of tasks/list.',
    },
  },
  required: [],
  default: {},
} as const;

export type LimitsConfig = FromSchema<typeof limitsSchema>;

/** search_tools' longest query (characters): a query is a few words; more is a mistake or an attack. */
export const TOOL_SEARCH_MAX_QUERY_CHARS = 1000;

/**
 * The largest `toolSearch.exposeMax`: a session's found tools are kept in its record (in Redis
 * with a shared store), read by each of its requests; 200 names keep that record small.
 */
export const TOOL_SEARCH_MAX_EXPOSED = 200;

/** Pages of one upstream's skills/list the gateway walks for a merged list (SEP-2640 hosts bound theirs alike). */
export const SKILL_LIST_MAX_PAGES = 100;

/**
 * The most bytes (as JSON) an interceptor server's reply may have, interceptors/list's or one
 * interceptor/invoke's: past it the reply is a failure, which follows the entry's onError.
 */
export const INTERCEPTOR_MAX_REPLY_BYTES = 4 * 1024 * 1024;
/** After an interceptor server failed to start, calls fail at once for this long before it is started again. */
export const INTERCEPTOR_RESTART_BACKOFF_MS = 1000;
/** How long an interceptor server may take to start and list its interceptors; past it, it is started again. */
export const INTERCEPTOR_CONNECT_TIMEOUT_MS = 10_000;
/** An interceptor server unused this long is stopped; the next message that needs it starts it again. */
export const INTERCEPTOR_IDLE_CLOSE_MS = 5 * 60_000;
