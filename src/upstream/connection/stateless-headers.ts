// The headers of a request to a 2026-07-28 upstream that its caller names: the wire builds the
// standard ones, the gateway the mirrored Mcp-Param-* ones of a tools/call. One encoding for both,
// here rather than in wires/, which only upstream/ may import.
import type { MirroredParam } from '../../contracts/mcp-handler.js';
import { isObject } from '../../jsonrpc/messages.js';

/** A header value as 2026-07-28 carries it: plain when it is visible ASCII, else the Base64 sentinel. */
export function headerValue(value: string): string {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value)
    ? value
    : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The Mcp-Param-* headers of a tools/call: each mirrored argument present in the body. */
export function mirroredHeaders(mirrored: readonly MirroredParam[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const p of mirrored) {
    let value: unknown = args;
    for (const key of p.path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    if (value === undefined || value === null) continue;
    headers[`mcp-param-${p.header.toLowerCase()}`] = headerValue(String(value));
  }
  return headers;
}
