/**
 * Which protocol era a request on the endpoint belongs to: 2026-07-28 (stateless, everything in
 * the body's `_meta`) or 2025 (a session). The era is the body's when it claims one; the version
 * header alone only decides what a body without the claim is refused with.
 */
import { SUPPORTED_VERSIONS, isStatelessEra, isSupportedVersion } from '../jsonrpc/versions.js';
import { versionClaim } from '../stateless/request-meta.js';
import { Rejection } from './error-reply.js';
import type { Intake } from './message-intake.js';

/**
 * Where a POST body goes: `stateless`, its one request served from its own `_meta`; `accepted`,
 * a 2026-07-28 notification (none is defined over HTTP: 202, nothing to do); `initialize`, its
 * one request opens a session; `session`, messages of an existing session.
 */
export type PostRoute = 'stateless' | 'accepted' | 'initialize' | 'session';

/** The route of a POST body, or the refusal of a body that mixes the eras. `versionHeader` is MCP-Protocol-Version. */
export function routePost({ batch, messages }: Intake, versionHeader: string | undefined): PostRoute {
  const first = messages[0]!;
  if (!batch) {
    if (first.kind === 'invalid') throw new Rejection('INVALID_REQUEST', `Invalid Request: ${first.reason}`, first.id);
    if (first.kind === 'request' && versionClaim(first.message) !== undefined) return 'stateless';
  }
  if (namesStatelessEra(versionHeader)) {
    if (batch) throw new Rejection('INVALID_REQUEST', 'Invalid Request: batches do not exist in this protocol version');
    if (first.kind === 'notification') return 'accepted';
    throw new Rejection(
      'MODERN_META_INVALID',
      `MCP-Protocol-Version ${versionHeader} requires params._meta with the protocol version and client capabilities`,
      first.kind === 'request' ? first.message.id : null,
    );
  }
  if (!batch) return first.kind === 'request' && first.message.method === 'initialize' ? 'initialize' : 'session';
  let initialize = false;
  for (const c of messages) {
    if (c.kind !== 'request') continue;
    if (versionClaim(c.message) !== undefined)
      throw new Rejection('INVALID_REQUEST', 'Invalid Request: stateless requests cannot be batched');
    if (c.message.method === 'initialize') initialize = true;
  }
  if (initialize) throw new Rejection('INVALID_REQUEST', 'Invalid Request: initialize must not be sent in a batch');
  return 'session';
}

/** The MCP-Protocol-Version header names a stateless revision (whatever the body says). */
export function namesStatelessEra(versionHeader: string | undefined): boolean {
  return versionHeader !== undefined && isStatelessEra(versionHeader);
}

/** A 2025 request's MCP-Protocol-Version, when sent, must be one we speak. */
export function checkVersionHeader(versionHeader: string | undefined): void {
  if (versionHeader !== undefined && !isSupportedVersion(versionHeader)) {
    throw new Rejection('UNSUPPORTED_PROTOCOL_VERSION', `Unsupported MCP-Protocol-Version: ${versionHeader}`, null, {
      supported: [...SUPPORTED_VERSIONS],
    });
  }
}
