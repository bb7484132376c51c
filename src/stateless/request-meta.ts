import type { ClientInfo } from '../contracts/request-context.js';
import type { MirroredParam } from '../contracts/mcp-handler.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { LOG_LEVELS, MCP_NAME_PARAM, META } from '../jsonrpc/meta-keys.js';
import { STATELESS_VERSIONS, isStatelessVersion } from '../jsonrpc/versions.js';

/** What a 2026-07-28 request says about its client, in its own `_meta`. */
export interface StatelessMeta {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: ClientInfo | undefined;
  /** The log level it asks for (messages of its upstream calls at or above it reach it). */
  logLevel: string | undefined;
}

export type HeaderLookup = (name: string) => string | undefined;

/** The version a request claims in `_meta`: its presence alone makes the request stateless (2026-07-28). */
export function versionClaim(request: JsonRpcRequest): unknown {
  const meta = request.params?._meta;
  return isObject(meta) ? meta[META.protocolVersion] : undefined;
}

/**
 * The per-request protocol fields of a stateless request, in the order the official conformance
 * suite holds servers to: the version header against `_meta` first (-32020: a header that
 * disagrees with the body is a mismatch whatever the version), then the version (-32022 names
 * the stateless versions we speak, as server/discover does), then the envelope (-32602), then
 * the other mirrored headers (-32020). Throws the GatewayError the transport answers with.
 */
export function readStatelessMeta(request: JsonRpcRequest, header: HeaderLookup): StatelessMeta {
  const meta = request.params!._meta as Record<string, unknown>;
  const version = meta[META.protocolVersion];
  mirror('MCP-Protocol-Version', header('mcp-protocol-version'), String(version));
  if (typeof version !== 'string' || !isStatelessVersion(version)) {
    throw new GatewayError('MODERN_UNSUPPORTED_VERSION', `Unsupported protocol version: ${JSON.stringify(version)}`, {
      supported: [...STATELESS_VERSIONS],
      requested: typeof version === 'string' ? version : String(version),
    });
  }
  const capabilities = meta[META.clientCapabilities];
  if (!isObject(capabilities))
    throw new GatewayError('MODERN_META_INVALID', `_meta["${META.clientCapabilities}"] must be an object`);
  const clientInfo = meta[META.clientInfo];
  if (clientInfo !== undefined && !(isObject(clientInfo) && typeof clientInfo.name === 'string')) {
    throw new GatewayError('MODERN_META_INVALID', `_meta["${META.clientInfo}"] must be an object with a name`);
  }
  // 2026-07-28 upstreams' log messages on its calls' replies reach it at or above this level.
  const logLevel = meta[META.logLevel];
  if (logLevel !== undefined && (typeof logLevel !== 'string' || !LOG_LEVELS.includes(logLevel))) {
    throw new GatewayError('MODERN_META_INVALID', `_meta["${META.logLevel}"] must be one of ${LOG_LEVELS.join(', ')}`);
  }
  checkStandardHeaders(request, header);
  const asked = logLevel as string | undefined;
  return {
    protocolVersion: version,
    clientCapabilities: capabilities,
    clientInfo: clientInfo as ClientInfo | undefined,
    logLevel: asked,
  };
}

function checkStandardHeaders(request: JsonRpcRequest, header: HeaderLookup): void {
  mirror('Mcp-Method', header('mcp-method'), request.method);
  const nameParam = MCP_NAME_PARAM.get(request.method);
  const name = nameParam === undefined ? undefined : request.params?.[nameParam];
  if (typeof name === 'string') mirror('Mcp-Name', header('mcp-name'), name);
}

function mirror(name: string, raw: string | undefined, expected: string): void {
  if (raw === undefined) throw new GatewayError('HEADER_MISMATCH', `Header mismatch: the ${name} header is required`);
  const value = decodeHeaderValue(raw);
  if (value === undefined)
    throw new GatewayError(
      'HEADER_MISMATCH',
      `Header mismatch: ${name} header value ${JSON.stringify(raw)} is not valid Base64`,
    );
  if (value !== expected)
    throw new GatewayError(
      'HEADER_MISMATCH',
      `Header mismatch: ${name} header value ${JSON.stringify(raw)} does not match body value ` +
        `${JSON.stringify(expected)}`,
    );
}

/**
 * Checks the `Mcp-Param-*` headers of a tools/call against its arguments: a value present in the
 * body must be in its header, equal after decoding (integers compared as numbers).
 */
export function checkMirroredParams(args: unknown, params: readonly MirroredParam[], header: HeaderLookup): void {
  for (const p of params) {
    let value: unknown = args;
    for (const key of p.path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    if (value === undefined || value === null) continue;
    const raw = header(`mcp-param-${p.header.toLowerCase()}`);
    const label = `Mcp-Param-${p.header}`;
    if (raw === undefined)
      throw new GatewayError(
        'HEADER_MISMATCH',
        `Header mismatch: the ${label} header is required (arguments.${p.path.join('.')} is set)`,
      );
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined)
      throw new GatewayError(
        'HEADER_MISMATCH',
        `Header mismatch: ${label} header value ${JSON.stringify(raw)} is not valid Base64`,
      );
    const same =
      typeof value === 'number'
        ? decoded.trim() !== '' && Number(decoded) === value
        : typeof value === 'boolean'
          ? decoded === String(value)
          : decoded === value;
    if (!same)
      throw new GatewayError(
        'HEADER_MISMATCH',
        `Header mismatch: ${label} header value ${JSON.stringify(raw)} does not match body value ` +
          `${JSON.stringify(value)}`,
      );
  }
}

const SENTINEL = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A header value as the client meant it: values that are not plain visible ASCII travel as
 * `=?base64?…?=` (UTF-8 inside). Undefined when the wrapper holds no valid Base64 (bad padding
 * or characters): such a header matches nothing. Without the whole wrapper a value is literal.
 */
export function decodeHeaderValue(raw: string): string | undefined {
  const m = SENTINEL.exec(raw);
  if (!m) return raw;
  return BASE64.test(m[1]!) ? Buffer.from(m[1]!, 'base64').toString('utf8') : undefined;
}
