/**
 * JSON-RPC 2.0 message shapes and a hand-written envelope check. The check looks at the
 * envelope only (jsonrpc, id, method, result/error): params are validated by whoever consumes
 * them, so the hot path never runs a schema validator over a whole message.
 */

export type JsonRpcId = string | number;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: Record<string, unknown>;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type Classified =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'invalid'; id: JsonRpcId | null; reason: string };

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
}

function isParams(v: unknown): boolean {
  // MCP params are always objects; JSON-RPC positional params are not used by MCP.
  return v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v));
}

export function classify(value: unknown): Classified {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'invalid', id: null, reason: 'message must be a JSON object' };
  }
  const m = value as Record<string, unknown>;
  const rawId = m.id;
  const id = isId(rawId) ? rawId : null;
  if (m.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };

  if (m.method !== undefined) {
    if (typeof m.method !== 'string' || m.method.length === 0) {
      return { kind: 'invalid', id, reason: 'method must be a non-empty string' };
    }
    if (!isParams(m.params)) return { kind: 'invalid', id, reason: 'params must be an object' };
    if (!('id' in m)) return { kind: 'notification', message: m as unknown as JsonRpcNotification };
    if (!isId(rawId)) return { kind: 'invalid', id: null, reason: 'id must be a string or an integer' };
    return { kind: 'request', message: m as unknown as JsonRpcRequest };
  }

  if ('result' in m || 'error' in m) {
    if ('result' in m && 'error' in m) return { kind: 'invalid', id, reason: 'response has both result and error' };
    if ('error' in m) {
      const e = m.error as Record<string, unknown> | null;
      if (typeof e !== 'object' || e === null || typeof e.code !== 'number' || typeof e.message !== 'string') {
        return { kind: 'invalid', id, reason: 'error must have a numeric code and a message' };
      }
      if (rawId !== null && !isId(rawId))
        return { kind: 'invalid', id: null, reason: 'id must be a string or an integer' };
    } else if (!isId(rawId)) {
      return { kind: 'invalid', id: null, reason: 'id must be a string or an integer' };
    }
    return { kind: 'response', message: m as unknown as JsonRpcResponse };
  }
  return { kind: 'invalid', id, reason: 'message is neither a request, a notification nor a response' };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The messages a JSON-RPC payload holds (a batch is several); undefined when it is not JSON. */
export function parseMessages(text: string): unknown[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return Array.isArray(value) ? value : [value];
}
