/**
 * The HTTP side of the gateway: where it listens (`listen`, `path`), the server's own bounds on
 * connections (`server`), which browser origins may call (`security`), SSE keep-alives (`sse`),
 * the drain on shutdown (`shutdown`), and the client transports beside Streamable HTTP (`legacySse`,
 * `websocket`). Schemas, types, checks.
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

/**
 * The 2024-11-05 HTTP+SSE transport: `false` turns it off; an object (default `{}`) keeps it on,
 * with its paths under each MCP endpoint's base and the grace a session gets after its stream
 * closes. Defaults are applied by `legacySseSettings`, not by ajv (which ignores defaults
 * inside `anyOf`).
 */
export const legacySseSchema = {
  anyOf: [
    { const: false },
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        ssePath: { type: 'string', pattern: '^/' },
        messagesPath: { type: 'string', pattern: '^/' },
        graceMs: { type: 'integer', minimum: 0, maximum: 600000 },
      },
      required: [],
    },
  ],
  default: {},
} as const;

/** WebSocket (subprotocol `mcp`): `false` turns it off; see `websocketSettings` for the defaults. */
export const websocketSchema = {
  anyOf: [
    { const: false },
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', pattern: '^/' },
        // A reader that lets this much pile up unsent is cut off (close code 1008). The older
        // spelling of limits.maxStreamBufferedBytes, for WebSocket only: when set, it wins there.
        maxBufferedBytes: { type: 'integer', minimum: 1024 },
        // A ping this often; a connection that did not answer the previous one is ended.
        pingIntervalMs: { type: 'integer', minimum: 100, maximum: 600000 },
      },
      required: [],
    },
  ],
  default: {},
} as const;

export interface LegacySseSettings {
  ssePath: string;
  messagesPath: string;
  graceMs: number;
}

export interface WebSocketSettings {
  path: string;
  maxBufferedBytes: number;
  pingIntervalMs: number;
}

export const LEGACY_SSE_DEFAULTS: LegacySseSettings = { ssePath: '/sse', messagesPath: '/messages', graceMs: 2000 };
export const WEBSOCKET_DEFAULTS: Omit<WebSocketSettings, 'maxBufferedBytes'> = { path: '/ws', pingIntervalMs: 30000 };

/** The legacy HTTP+SSE transport's settings, or undefined when `legacySse: false`. */
export function legacySseSettings(value: FromSchema<typeof legacySseSchema>): LegacySseSettings | undefined {
  return value === false ? undefined : { ...LEGACY_SSE_DEFAULTS, ...value };
}

/**
 * The WebSocket transport's settings, or undefined when `websocket: false`. Its bound on unsent
 * bytes is every stream's (`maxStreamBufferedBytes`, from limits) unless `maxBufferedBytes` is set.
 */
export function websocketSettings(
  value: FromSchema<typeof websocketSchema>,
  maxStreamBufferedBytes: number,
): WebSocketSettings | undefined {
  return value === false ? undefined : { ...WEBSOCKET_DEFAULTS, maxBufferedBytes: maxStreamBufferedBytes, ...value };
}
