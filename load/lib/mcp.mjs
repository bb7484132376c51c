// @ts-check
// MCP Streamable HTTP bodies and session set-up, by hand (no SDK): what a load run sends.

export const PROTOCOL_VERSION = '2025-06-18';

export const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** @param {string} sid */
export function sessionHeaders(sid) {
  return { ...POST_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL_VERSION };
}

/** @param {number | string} id */
export function initializeBody(id = 0) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'mcp-gateway-bench', version: '1' },
    },
  });
}

/** The stateless revision: no session, the request carries its own version and capabilities. */
export const STATELESS_VERSION = '2026-07-28';

/**
 * Headers of a stateless tools/call (the version, method and tool mirrored from the body).
 * @param {string} tool
 */
export function statelessCallHeaders(tool) {
  return { ...POST_HEADERS, 'mcp-protocol-version': STATELESS_VERSION, 'mcp-method': 'tools/call', 'mcp-name': tool };
}

/**
 * @param {number | string} id
 * @param {string} name
 * @param {Record<string, unknown>} args
 */
export function statelessToolsCallBody(id, name, args) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-gateway-bench', version: '1' },
  };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta } });
}

export const INITIALIZED_BODY = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

/**
 * @param {number | string} id
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @param {string | number} [progressToken]
 */
export function toolsCallBody(id, name, args, progressToken) {
  /** @type {Record<string, unknown>} */
  const params = { name, arguments: args };
  if (progressToken !== undefined) params._meta = { progressToken };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
}

/**
 * initialize + notifications/initialized; returns the session id.
 * @param {string} url
 * @param {{ signal?: AbortSignal, headers?: Record<string, string> }} [o]  headers: e.g. an API key's Authorization
 */
export async function openSession(url, o = {}) {
  const extra = o.headers ?? {};
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...extra },
    body: initializeBody(0),
    signal: o.signal,
  });
  const text = await res.text();
  const sid = res.headers.get('mcp-session-id');
  if (res.status !== 200 || !sid)
    throw new Error(`initialize at ${url} failed: HTTP ${res.status} ${text.slice(0, 300)}`);
  const n = await fetch(url, {
    method: 'POST',
    headers: { ...sessionHeaders(sid), ...extra },
    body: INITIALIZED_BODY,
    signal: o.signal,
  });
  await n.arrayBuffer();
  if (n.status !== 202 && n.status !== 200) throw new Error(`notifications/initialized failed: HTTP ${n.status}`);
  return sid;
}

/**
 * @param {string} url
 * @param {string} sid
 */
export async function deleteSession(url, sid) {
  const res = await fetch(url, { method: 'DELETE', headers: sessionHeaders(sid) });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Runs `fn(i)` for i in [0, n) with at most `concurrency` at once; results in order.
 * @template T
 * @param {number} n
 * @param {number} concurrency
 * @param {(i: number) => Promise<T>} fn
 * @returns {Promise<T[]>}
 */
export async function pooled(n, concurrency, fn) {
  /** @type {T[]} */
  const out = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return out;
}

/**
 * @param {string} url
 * @param {number} n
 * @param {number} [concurrency]
 * @param {Record<string, string>} [headers]  on every request (e.g. an API key's Authorization)
 */
export function openSessions(url, n, concurrency = 25, headers = {}) {
  return pooled(n, concurrency, () => openSession(url, { headers }));
}

/**
 * A cheap check of one tools/call reply, JSON or SSE: HTTP 2xx, a JSON-RPC result and no
 * JSON-RPC error. `progress` counts the progress notifications an SSE reply carried.
 * @param {number} status
 * @param {string} body
 * @returns {{ ok: boolean, rpcError: boolean, progress: number }}
 */
export function checkCallReply(status, body) {
  let progress = 0;
  let at = body.indexOf('notifications/progress');
  while (at !== -1) {
    progress++;
    at = body.indexOf('notifications/progress', at + 22);
  }
  const rpcError = body.includes('"error":{');
  const ok = status >= 200 && status < 300 && !rpcError && body.includes('"result":');
  return { ok, rpcError, progress };
}

/**
 * The full check, for a sample of replies: parses the body (JSON, or the last SSE data line)
 * and compares the tool result with what an echo should return.
 * @param {string} body
 * @param {string} expectedText
 */
export function verifyEchoReply(body, expectedText) {
  let json = body.trim();
  if (!json.startsWith('{')) {
    const data = body.split('\n').filter((l) => l.startsWith('data: '));
    json = (data.at(-1) ?? '').slice(6);
  }
  try {
    const msg = JSON.parse(json);
    return msg?.jsonrpc === '2.0' && msg.result?.content?.[0]?.text === expectedText;
  } catch {
    return false;
  }
}
