/** The 2025 revisions this gateway speaks, newest first: sessions opened by initialize. */
export const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type ProtocolVersion = (typeof SUPPORTED_VERSIONS)[number];

export const LATEST_VERSION: ProtocolVersion = SUPPORTED_VERSIONS[0];

const supported: ReadonlySet<string> = new Set(SUPPORTED_VERSIONS);

export function isSupportedVersion(v: unknown): v is ProtocolVersion {
  return typeof v === 'string' && supported.has(v);
}

/** initialize negotiation: echo the client's version when we speak it, else offer our latest. */
export function negotiateVersion(requested: unknown): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_VERSION;
}

/**
 * The revision of the HTTP+SSE transport, which has no Streamable HTTP: spoken only over the
 * connection transports (legacy HTTP+SSE, WebSocket), to clients that ask for it.
 */
export const CONNECTION_ONLY_VERSION = '2024-11-05';

/** JSON-RPC batches exist only in 2025-03-26. */
export function allowsBatch(v: string): boolean {
  return v === '2025-03-26';
}

/**
 * Stateless revisions (2026-07-28 on): every request names its version in `_meta`, with no
 * initialize and no session. Served beside the 2025 revisions on the same endpoint.
 */
export const STATELESS_VERSIONS = ['2026-07-28'] as const;

const statelessVersions: ReadonlySet<string> = new Set(STATELESS_VERSIONS);

export function isStatelessVersion(v: unknown): boolean {
  return typeof v === 'string' && statelessVersions.has(v);
}

/** A version string of the stateless era, supported or not (revisions are dates: they order as strings). */
export function isStatelessEra(v: string): boolean {
  return v >= STATELESS_VERSIONS[STATELESS_VERSIONS.length - 1]!;
}
