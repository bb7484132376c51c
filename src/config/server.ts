/**
 * The HTTP side of the gateway: where it listens (`listen`, `path`), the server's own bounds on
 * connections (`server`), which browser origins may call (`security`), SSE keep-alives (`sse`)
 * and the drain on shutdown (`shutdown`). Schemas, types, checks.
 */
import type { FromSchema } from 'json-schema-to-ts';

export const listenSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string', minLength: 1, default: '127.0.0.1' },
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    // Node's default (511) overflows under a burst of new connections; the kernel caps it at somaxconn.
    backlog: { type: 'integer', minimum: 1, maximum: 65535, default: 4096 },
  },
  required: [],
  default: {},
} as const;

// A reply already being written (an SSE stream) is not affected by these.
export const serverSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // A socket that sent nothing, or half a request line, is closed this long after it connected
    // (or after the previous request of a keep-alive connection).
    headersTimeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 10000 },
    // Headers then no body (or a trickle): closed this long after the request began.
    requestTimeoutMs: { type: 'integer', minimum: 100, maximum: 3600000, default: 30000 },
    // An idle keep-alive connection between two requests.
    keepAliveTimeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 5000 },
    // Open connections on this replica (SSE streams included); the next ones are closed at once.
    // Lowered at start-up when the process's open-file limit could not hold this many.
    maxConnections: { type: 'integer', minimum: 1, default: 10000 },
  },
  required: [],
  default: {},
} as const;

export const pathSchema = { type: 'string', pattern: '^/', default: '/mcp' } as const;

export const securitySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Exact origins ("https://app.example.com"). Localhost origins on any port are always allowed.
    allowedOrigins: { type: 'array', items: { type: 'string' }, default: [] },
  },
  required: [],
  default: {},
} as const;

export const sseSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { keepAliveMs: { type: 'integer', minimum: 1000, default: 15000 } },
  required: [],
  default: {},
} as const;

export const shutdownSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { drainMs: { type: 'integer', minimum: 0, default: 10000 } },
  required: [],
  default: {},
} as const;

/** Bounds of the HTTP server itself (slow or idle sockets, how many at once). */
export type ServerConfig = FromSchema<typeof serverSchema>;

/** Node refuses a headers timeout longer than the whole-request one. */
export function serverChecks(server: unknown, problems: string[]): void {
  if (typeof server !== 'object' || server === null) return;
  const { headersTimeoutMs, requestTimeoutMs } = server as ServerConfig;
  if (headersTimeoutMs > requestTimeoutMs) problems.push(`server.headersTimeoutMs: must be <= server.requestTimeoutMs (${requestTimeoutMs})`);
}
