// The documents of server cards (SEP-2127 draft, experimental-ext-server-card): one endpoint's
// card, and the AI Catalog entry that points at it. Pure: what an endpoint is (its path, tool
// count, who may see it) is server-cards.ts's to find out; here it only becomes JSON.
import { createHash } from 'node:crypto';
import { cardPath } from '../config/server-cards.js';
import { STATELESS_VERSIONS, SUPPORTED_VERSIONS } from '../jsonrpc/versions.js';

export const CARD_TYPE = 'application/mcp-server-card+json';
export const CATALOG_TYPE = 'application/ai-catalog+json';
const CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
/** The `_meta` key of an endpoint's tool count: the draft's cards name no tools, and say nothing of how many. */
export const TOOL_COUNT_META = 'mcpgw/toolCount';

/** One MCP endpoint as its card tells it. */
export interface CardEndpoint {
  /** The MCP endpoint's path (`path`, or a servers[] entry's). */
  path: string;
  /** The server half of the card's name (`<namespace>/<name>`). */
  name: string;
  title: string | undefined;
  description: string;
  toolCount: number;
  /** The legacy HTTP+SSE stream path, on the main endpoint only. */
  legacySse: string | undefined;
}

/** Where the documents point: the origin clients reach, and what names are made of. */
export interface CardSite {
  /** e.g. https://mcp.example.com (no path). */
  origin: string;
  /** The reverse-DNS half of card names. */
  namespace: string;
  version: string;
  /** How the endpoints authenticate callers: the card says a token is needed, not which. */
  auth: 'none' | 'jwt' | 'introspection' | 'api-key';
}

/** A card's body, its members always in the same order so that the same card has the same ETag. */
export function cardDocument(endpoint: CardEndpoint, site: CardSite): Record<string, unknown> {
  const headers =
    site.auth === 'none'
      ? undefined
      : [
          {
            name: 'Authorization',
            description:
              site.auth === 'api-key'
                ? 'Bearer <API key> (keys are handed out by the operator)'
                : 'Bearer <OAuth access token> (see /.well-known/oauth-protected-resource)',
            isRequired: true,
            isSecret: true,
          },
        ];
  const remotes: Array<Record<string, unknown>> = [
    {
      type: 'streamable-http',
      url: `${site.origin}${endpoint.path}`,
      ...(headers ? { headers } : {}),
      supportedProtocolVersions: [...STATELESS_VERSIONS, ...SUPPORTED_VERSIONS],
    },
  ];
  if (endpoint.legacySse !== undefined)
    remotes.push({ type: 'sse', url: `${site.origin}${endpoint.legacySse}`, ...(headers ? { headers } : {}) });
  return {
    $schema: CARD_SCHEMA,
    name: `${site.namespace}/${endpoint.name}`,
    version: site.version,
    description: endpoint.description,
    ...(endpoint.title !== undefined ? { title: endpoint.title } : {}),
    remotes,
    _meta: { [TOOL_COUNT_META]: endpoint.toolCount },
  };
}

/** The AI Catalog of the endpoints a caller may see, each entry a link to its card. */
export function catalogDocument(endpoints: readonly CardEndpoint[], site: CardSite): Record<string, unknown> {
  const publisher = site.origin.replace(/^https?:\/\//, '').replace(/:\d+$/, '');
  return {
    specVersion: '1.0',
    entries: endpoints.map((e) => ({
      identifier: `urn:air:${urnPart(publisher)}:mcp:${urnPart(e.name)}`,
      type: CARD_TYPE,
      url: `${site.origin}${cardPath(e.path)}`,
    })),
  };
}

/** A URN segment: the draft's identifiers are colon-separated, so an IPv6 host's colons (and brackets) go. */
function urnPart(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '-');
}

/** The server half of a card name for a servers[] entry: its name, or its path made one. */
export function cardName(name: string | undefined, path: string): string {
  if (name !== undefined && /^[A-Za-z0-9._-]+$/.test(name)) return name;
  return path.replace(/^\/+/, '').replace(/[^A-Za-z0-9._-]/g, '-') || 'root';
}

/** A host as the reverse-DNS half of card names: `mcp.example.com` → `com.example.mcp`; an IP stays as it is. */
export function reverseDns(hostname: string): string {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (/^[0-9.]+$/.test(host)) return host;
  if (!/^[A-Za-z0-9.-]+$/.test(host)) return host.replace(/[^A-Za-z0-9.-]/g, '-') || 'localhost';
  return host.split('.').filter(Boolean).reverse().join('.') || 'localhost';
}

/** A strong ETag: the body's sha256, so the same body always has the same tag and any change changes it. */
export function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}

/**
 * Whether If-None-Match names this tag: `*`, or a list of tags compared weakly, as RFC 9110
 * says a GET's If-None-Match is (W/"x" matches "x").
 */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}
