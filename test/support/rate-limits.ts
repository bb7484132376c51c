/** Calls through a gateway with rate limits: 2025 sessions opened with an API key, one tools/call per POST. */
import { createHash } from 'node:crypto';
import { post } from './gateway.js';

export const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** auth.mode api-key with one key per principal (the key is the principal's name, reversed). */
export function apiKeyAuth(principals: readonly string[]): Record<string, unknown> {
  return { mode: 'api-key', apiKeys: principals.map((name) => ({ name, sha256: sha256(keyOf(name)) })) };
}

export const keyOf = (principal: string) => `${[...principal].reverse().join('')}-key-0123456789`;

const VERSION = '2025-06-18';

/** A session of `principal` (none: anonymous) opened on `url`; its id. */
export async function openAs(url: URL, principal?: string, version = VERSION): Promise<string> {
  const auth = principal ? bearer(keyOf(principal)) : {};
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'rate-test', version: '1' } },
  };
  const res = await post(url, init, auth);
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${res.text}`);
  const sid = res.headers.get('mcp-session-id')!;
  const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
  await post(url, initialized, { ...auth, ...sessionHeaders(sid, version) });
  return sid;
}

export function sessionHeaders(sid: string, version = VERSION): Record<string, string> {
  return { 'mcp-session-id': sid, 'mcp-protocol-version': version };
}

export interface CallOutcome {
  status: number;
  retryAfter: string | null;
  /** The reply's result, or its error. */
  result?: unknown;
  error?: { code: number; message: string; data?: { type?: string; rule?: string; retryAfterMs?: number } };
}

/** One tools/call of echo__echo on `url` in session `sid`. */
export async function callEcho(url: URL, sid: string, id: number, principal?: string): Promise<CallOutcome> {
  const auth = principal ? bearer(keyOf(principal)) : {};
  const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo__echo', arguments: { text: 'hi' } } };
  const res = await post(url, body, { ...auth, ...sessionHeaders(sid) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), ...res.json };
}

/** `n` calls one after another, the i-th to `urls[i % urls.length]`: round-robin over replicas. */
export async function callsRoundRobin(
  urls: readonly URL[],
  sid: string,
  n: number,
  principal?: string,
): Promise<CallOutcome[]> {
  const out: CallOutcome[] = [];
  for (let i = 0; i < n; i++) out.push(await callEcho(urls[i % urls.length]!, sid, i + 1, principal));
  return out;
}

export const admitted = (outcomes: readonly CallOutcome[]) => outcomes.filter((o) => o.result !== undefined).length;
export const refused = (outcomes: readonly CallOutcome[]) =>
  outcomes.filter((o) => o.error?.data?.type === 'RATE_LIMITED');
