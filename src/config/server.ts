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
  description: 'Where the gateway listens.',
  properties: {
    host: {
      type: 'string',
      minLength: 1,
      default: '127.0.0.1',
      description:
        'The address to listen on (MCPGW_HOST overrides it). The loopback default suits auth.mode none; the ' +
        'container image sets MCPGW_HOST=0.0.0.0.',
    },
    port: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      default: 8080,
      description: 'The TCP port (MCPGW_PORT overrides it).',
    },
    // Node's default (511) overflows under a burst of new connections; the kernel caps it at somaxconn.
    backlog: {
      type: 'integer',
      minimum: 1,
      maximum: 65535,
      default: 4096,
      description: 'Pending connections the kernel queues before the gateway accepts them (capped by somaxconn).',
    },
  },
  required: [],
  default: {},
} as const;

export const serverSchema = {
  type: 'object',
  additionalProperties: false,
  description: "The HTTP server's own bounds on sockets. None of them cuts a reply being written (SSE streams).",
  properties: {
    headersTimeoutMs: {
      type: 'integer',
      minimum: 100,
      maximum: 600000,
      default: 10000,
      description:
        'Request headers must be complete within this of connecting (or of the previous request on a keep-alive ' +
        'connection): a socket that sends nothing, or half a request line, is closed with 408 REQUEST_TIMEOUT. ' +
        'At most requestTimeoutMs.',
    },
    requestTimeoutMs: {
      type: 'integer',
      minimum: 100,
      maximum: 3600000,
      default: 30000,
      description:
        'The whole request, body included, within this of its start (headers then no body, or a trickle: closed ' +
        'with 408 REQUEST_TIMEOUT).',
    },
    keepAliveTimeoutMs: {
      type: 'integer',
      minimum: 100,
      maximum: 600000,
      default: 5000,
      description:
        'An idle keep-alive connection between two requests is closed after this. Set it above the idle timeout ' +
        'of a load balancer that reuses connections.',
    },
    maxConnections: {
      type: 'integer',
      minimum: 1,
      default: 10000,
      description:
        'Open connections on this replica, SSE streams and WebSockets included; the next one is closed as soon as ' +
        'it is accepted (mcpgw_connections_refused_total). Lowered at start-up, with a warning, to the open-file ' +
        'limit (ulimit -n) less a reserve (256, or a quarter of the limit).',
    },
  },
  required: [],
  default: {},
} as const;

export const pathSchema = {
  type: 'string',
  pattern: '^/',
  default: '/mcp',
  description:
    'The MCP endpoint (POST, GET, DELETE), serving the whole catalog; virtual servers (servers[]) have paths of ' +
    'their own.',
} as const;

export const securitySchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Which browser pages may call the gateway (DNS-rebinding protection).',
  properties: {
    allowedOrigins: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description:
        'Exact origins a browser may call from ("https://app.example.com"). Localhost origins on any port always ' +
        'pass, and so do requests without Origin (non-browser clients); others get 403 ORIGIN_FORBIDDEN. It stops ' +
        'browsers only: turn auth on before exposing the gateway.',
    },
  },
  required: [],
  default: {},
} as const;

export const sseSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Server-Sent Events on long-lived streams.',
  properties: {
    keepAliveMs: {
      type: 'integer',
      minimum: 1000,
      default: 15000,
      description: 'A comment line this often on idle GET streams, listen streams and legacy HTTP+SSE streams.',
    },
  },
  required: [],
  default: {},
} as const;

export const shutdownSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'What SIGTERM and SIGINT do.',
  properties: {
    drainMs: {
      type: 'integer',
      minimum: 0,
      default: 10000,
      description:
        'After a stop signal, replies and WebSocket requests in flight get this long to finish (new work gets ' +
        'SHUTTING_DOWN); then every upstream process group is stopped (stdin closed, SIGTERM, SIGKILL) and every ' +
        'remote upstream session ended (DELETE).',
    },
  },
  required: [],
  default: {},
} as const;

/** Bounds of the HTTP server itself (slow or idle sockets, how many at once). */
export type ServerConfig = FromSchema<typeof serverSchema>;

/** Node refuses a headers timeout longer than the whole-request one. */
export function serverChecks(server: unknown, problems: string[]): void {
  if (typeof server !== 'object' || server === null) return;
  const { headersTimeoutMs, requestTimeoutMs } = server as ServerConfig;
  if (headersTimeoutMs > requestTimeoutMs)
    problems.push(`server.headersTimeoutMs: must be <= server.requestTimeoutMs (${requestTimeoutMs})`);
}

/**
 * The 2024-11-05 HTTP+SSE transport: `false` turns it off; an object (default `{}`) keeps it on,
 * with its paths under each MCP endpoint's base and the grace a session gets after its stream
 * closes. Defaults are applied by `legacySseSettings`, not by ajv (which ignores defaults
 * inside `anyOf`).
 */
export const legacySseSchema = {
  description:
    'The 2024-11-05 HTTP+SSE transport, for older clients: false turns it off. Its paths sit under each MCP ' +
    "endpoint's base (a virtual server at /mcp/reader has /mcp/reader/sse).",
  anyOf: [
    { const: false },
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        ssePath: {
          type: 'string',
          pattern: '^/',
          description: 'GET opens a session and its stream; the first event (endpoint) names where to POST.',
        },
        messagesPath: {
          type: 'string',
          pattern: '^/',
          description: "POST ?sessionId=<id>: the client's messages, answered 202; replies go on the stream.",
        },
        graceMs: {
          type: 'integer',
          minimum: 0,
          maximum: 600000,
          description: 'The session ends this long after its stream closed (the transport has no resumption).',
        },
      },
      required: [],
    },
  ],
  default: {},
} as const;

/** WebSocket (subprotocol `mcp`): `false` turns it off; see `websocketSettings` for the defaults. */
export const websocketSchema = {
  description:
    'MCP over WebSocket (subprotocol mcp, one JSON-RPC message per text message): false turns it off. Its path sits ' +
    "under each MCP endpoint's base.",
  anyOf: [
    { const: false },
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', pattern: '^/', description: 'Where the upgrade is accepted (a plain GET gets 426).' },
        maxBufferedBytes: {
          type: 'integer',
          minimum: 1024,
          description:
            'A client that leaves more than this unread is cut off (close 1008). The older spelling of ' +
            'limits.maxStreamBufferedBytes (its default), for WebSocket only: when set, it wins here.',
        },
        pingIntervalMs: {
          type: 'integer',
          minimum: 100,
          maximum: 600000,
          description: 'A ping this often; a connection that did not answer the previous one is ended.',
        },
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
