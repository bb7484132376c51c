/** The `_meta` keys MCP 2026-07-28 reserves for per-request protocol fields and result identity. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** Keys under this prefix describe the client's request to us; an upstream of the 2025 era gets none of them. */
export const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';

export const LOG_LEVELS: readonly string[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
