/**
 * 2026-07-28 (stateless) requests for tests: the `_meta` every such request carries, and the
 * headers that must mirror its body (MCP-Protocol-Version, Mcp-Method, Mcp-Name).
 */
import { post, type RunningGateway } from './gateway.js';

export const MODERN_VERSION = '2026-07-28';

export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1' },
} as const;

/** MODERN_META from a client with these capabilities (elicitation, sampling…) instead of none. */
export function statelessMeta(clientCapabilities: Record<string, unknown>): Record<string, unknown> {
  return { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': clientCapabilities };
}

/** A well-formed stateless request (its own `_meta` merged over MODERN_META) and its headers. */
export function statelessRequest(
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
): { body: object; headers: Record<string, string> } {
  const extraMeta = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...MODERN_META, ...extraMeta } } };
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method };
  if ((method === 'tools/call' || method === 'prompts/get') && typeof params.name === 'string')
    headers['mcp-name'] = params.name;
  if (method === 'resources/read' && typeof params.uri === 'string') headers['mcp-name'] = params.uri;
  return { body, headers };
}

/** POSTs a stateless request to the gateway. */
export function postStateless(
  gw: RunningGateway,
  id: number | string,
  method: string,
  params?: Record<string, unknown>,
) {
  const { body, headers } = statelessRequest(id, method, params);
  return post(gw.url, body, headers);
}
