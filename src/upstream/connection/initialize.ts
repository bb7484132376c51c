import { GatewayError } from '../../jsonrpc/errors.js';
import { isObject } from '../../jsonrpc/messages.js';
import type { ClientIdentity, McpResult, UpstreamCall, UpstreamServerInfo } from '../../contracts/upstream.js';

/** The MCP handshake's two messages: the request that opens a session, and the notification that ends the handshake. */
export const INITIALIZE = 'initialize';
export const INITIALIZED = 'notifications/initialized';

/**
 * A start (process spawn or connection, imports, initialize) is not a tool call: a short per-call timeoutMs must not
 * fail it.
 */
const MIN_START_TIMEOUT_MS = 10_000;
const MAX_START_TIMEOUT_MS = 30_000;

/**
 * How long an upstream may take to answer initialize (or, legacy SSE, to name its endpoint), whatever wire it speaks.
 */
export function startTimeoutMs(timeoutMs: number): number {
  return Math.min(Math.max(timeoutMs, MIN_START_TIMEOUT_MS), MAX_START_TIMEOUT_MS);
}

/** What one wire lends the handshake: how it sends a request and a notification. */
export interface HandshakeWire {
  /** The worker's label, for the timeout's message. */
  label: string;
  identity: ClientIdentity;
  /** The upstream's per-call timeoutMs; the start deadline is derived from it. */
  timeoutMs: number;
  call(method: string, params: Record<string, unknown>): UpstreamCall;
  /**
   * The upstream answered: what the wire must know before anything else reaches the session (HTTP: its protocol
   * version).
   */
  accepted?(info: UpstreamServerInfo): void;
  /** Sends notifications/initialized; awaited where the wire can tell it was delivered (HTTP). */
  notify(method: string): Promise<void> | void;
}

/**
 * The MCP initialize handshake, the same on every wire: initialize with the client's identity,
 * within the start deadline; a result that names protocolVersion, capabilities and serverInfo;
 * then notifications/initialized. Rejects with the call's error, UPSTREAM_TIMEOUT or
 * UPSTREAM_PROTOCOL_ERROR; the wire cleans up after a failure.
 */
export async function initialize(wire: HandshakeWire): Promise<UpstreamServerInfo> {
  const { identity } = wire;
  const call = wire.call(INITIALIZE, {
    protocolVersion: identity.protocolVersion,
    capabilities: identity.capabilities,
    clientInfo: identity.clientInfo,
  });
  const timer = setTimeout(
    () => call.cancel(new GatewayError('UPSTREAM_TIMEOUT', `${wire.label} did not answer initialize in time`)),
    startTimeoutMs(wire.timeoutMs),
  );
  let info: UpstreamServerInfo;
  try {
    info = parseInitializeResult(await call.promise);
  } finally {
    clearTimeout(timer);
  }
  wire.accepted?.(info);
  await wire.notify(INITIALIZED);
  return info;
}

function parseInitializeResult(result: McpResult): UpstreamServerInfo {
  const { protocolVersion, capabilities, serverInfo, instructions } = result;
  if (typeof protocolVersion !== 'string' || !isObject(capabilities) || !isObject(serverInfo)) {
    throw new GatewayError(
      'UPSTREAM_PROTOCOL_ERROR',
      'Upstream initialize result lacks protocolVersion, capabilities or serverInfo',
    );
  }
  return {
    protocolVersion,
    capabilities,
    serverInfo: serverInfo as UpstreamServerInfo['serverInfo'],
    ...(typeof instructions === 'string' ? { instructions } : {}),
  };
}
