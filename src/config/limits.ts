/** Bounds on what clients may hold or send (`limits`) and on the size of list replies (`pagination`). */
import type { FromSchema } from 'json-schema-to-ts';

export const limitsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    bodyBytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024 },
    // MCP messages nest a few levels; thousands make recursive consumers overflow their stack.
    maxJsonDepth: { type: 'integer', minimum: 8, maximum: 1000, default: 64 },
    // Batches exist only in 2025-03-26 sessions.
    maxBatchSize: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
    // Per session, or per principal of stateless requests; on each replica. 0: no limit.
    maxInFlightPerClient: { type: 'integer', minimum: 0, default: 64 },
    // Memory store: per replica; Redis: across all replicas. A session is ~300 B in memory.
    maxSessions: { type: 'integer', minimum: 1, default: 100_000 },
    // With auth on; 0: no limit.
    maxSessionsPerPrincipal: { type: 'integer', minimum: 0, default: 1000 },
    // At a limit, the least recently used session makes room if it was idle this long.
    sessionEvictionIdleSeconds: { type: 'integer', minimum: 0, default: 60 },
    // Long-lived SSE streams (GET, resumed, listen) per replica.
    maxStreams: { type: 'integer', minimum: 1, default: 10_000 },
    // Bytes written to one stream (any SSE reply or stream, WebSocket) that its reader has not taken
    // yet: a client that stops reading would otherwise hold gateway memory without end. Past it,
    // before the next message, the stream is cut off. One message larger than this still goes out.
    maxStreamBufferedBytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024 },
    // Per-session workers a client may start a minute on a replica (its principal with auth on,
    // else its session; stateless requests without auth are not counted): each is a process
    // start (~0.3 s of CPU for a Node server), so session churn must not become process churn
    // that also evicts other clients' workers at pool.max. 0: no limit.
    workerStartsPerMinute: { type: 'integer', minimum: 0, default: 60 },
  },
  required: [],
  default: {},
} as const;

export const paginationSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { pageSize: { type: 'integer', minimum: 1, maximum: 10000, default: 500 } },
  required: [],
  default: {},
} as const;

export type LimitsConfig = FromSchema<typeof limitsSchema>;
