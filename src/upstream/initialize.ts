import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import type { ClientIdentity, McpResult, UpstreamServerInfo } from '../contracts/upstream.js';

/** A start (process spawn or connection, imports, initialize) is not a tool call: a short per-call timeoutMs must not fail it. */
const MIN_START_TIMEOUT_MS = 10_000;
const MAX_START_TIMEOUT_MS = 30_000;

/** How long an upstream may take to answer initialize, whatever transport it speaks. */
export function startTimeoutMs(timeoutMs: number): number {
  return Math.min(Math.max(timeoutMs, MIN_START_TIMEOUT_MS), MAX_START_TIMEOUT_MS);
}

export function initializeParams(identity: ClientIdentity): Record<string, unknown> {
  return { protocolVersion: identity.protocolVersion, capabilities: identity.capabilities, clientInfo: identity.clientInfo };
}

export function parseInitializeResult(result: McpResult): UpstreamServerInfo {
  const { protocolVersion, capabilities, serverInfo, instructions } = result;
  if (typeof protocolVersion !== 'string' || !isObject(capabilities) || !isObject(serverInfo)) {
    throw new GatewayError('UPSTREAM_PROTOCOL_ERROR', 'Upstream initialize result lacks protocolVersion, capabilities or serverInfo');
  }
  return {
    protocolVersion,
    capabilities,
    serverInfo: serverInfo as UpstreamServerInfo['serverInfo'],
    ...(typeof instructions === 'string' ? { instructions } : {}),
  };
}
