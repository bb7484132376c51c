/**
 * The `serverCards` section (and `servers[].card`): server cards as the SEP-2127 draft describes
 * them, one per MCP endpoint at `<endpoint>/server-card`, and the AI Catalog that lists them at
 * /.well-known/ai-catalog.json. Off by default: a card tells anyone who asks where the endpoints
 * are and how many tools each has. See docs/server-cards.md.
 */
import type { FromSchema } from 'json-schema-to-ts';

// The draft's bounds on a card's title and description (1 to 100 characters).
const cardText = { type: 'string', minLength: 1, maxLength: 100 } as const;

export const serverCardsSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Server cards (SEP-2127 draft) per MCP endpoint, and the AI Catalog: see docs/server-cards.md.',
  properties: {
    enabled: {
      type: 'boolean',
      default: false,
      description:
        'On: GET <path>/server-card for the main path and each servers[] path, and /.well-known/ai-catalog.json. ' +
        'Off: neither exists (404).',
    },
    public: {
      type: 'boolean',
      default: false,
      description:
        'With auth on, a card is served (and listed in the catalog) only to a caller its endpoint would admit, ' +
        'others get that endpoint 401 or 403; true: to anyone. servers[].card.public overrides it per server.',
    },
    baseUrl: {
      type: 'string',
      pattern: '^https?://[^/?#\\s]+$',
      maxLength: 512,
      description:
        'The origin the cards and the catalog name (e.g. https://mcp.example.com), as clients reach the gateway ' +
        "behind a proxy. Default: the request's own (its Host header and scheme).",
    },
    namespace: {
      type: 'string',
      pattern: '^[a-zA-Z0-9.-]+$',
      maxLength: 128,
      description:
        'The reverse-DNS half of every card name (<namespace>/<server>, e.g. com.example). Default: the host of ' +
        'baseUrl (or of the request) reversed.',
    },
    title: { ...cardText, description: "The main endpoint's card title (servers[].card.title for a server's)." },
    description: {
      ...cardText,
      description: "The main endpoint's card description. Default: one naming the gateway.",
    },
    maxAgeSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 86400,
      default: 300,
      description:
        'Cache-Control max-age of cards and the catalog; clients revalidate with their ETag (304) after it. ' +
        'A reload changes a card (and its ETag) at once, but a client may keep the old one this long.',
    },
  },
  required: [],
  default: {},
} as const;

/** `servers[].card`: how one virtual server's card reads, and whether anyone may see it. */
export const serverCardSchema = {
  type: 'object',
  additionalProperties: false,
  description: "This server's card (serverCards): its title, description, and whether it is public.",
  properties: {
    public: {
      type: 'boolean',
      description:
        'Served to anyone even with auth on (true), or only to callers this server admits (false). ' +
        'Default: serverCards.public.',
    },
    title: { ...cardText, description: 'The card title.' },
    description: { ...cardText, description: 'The card description. Default: one naming the server.' },
  },
  required: [],
} as const;

export type ServerCardsConfig = FromSchema<typeof serverCardsSchema>;
export type ServerCardConfig = FromSchema<typeof serverCardSchema>;

/** The path of an endpoint's card: `<endpoint>/server-card` (`/server-card` for an endpoint at `/`). */
export function cardPath(endpoint: string): string {
  return `${endpoint === '/' ? '' : endpoint}/server-card`;
}

/** With cards on, no servers[] path may be the card path of an endpoint: both would answer GET there. */
export function serverCardsChecks(cards: unknown, mainPath: unknown, servers: unknown, problems: string[]): void {
  if (typeof cards !== 'object' || cards === null || (cards as ServerCardsConfig).enabled !== true) return;
  if (!Array.isArray(servers)) return;
  const paths = servers.map((s: unknown) => {
    const path = typeof s === 'object' && s !== null ? (s as { path?: unknown }).path : undefined;
    return typeof path === 'string' && path.length > 1 ? path.replace(/\/+$/, '') : path;
  });
  const taken = new Set([mainPath, ...paths].filter((p): p is string => typeof p === 'string').map(cardPath));
  paths.forEach((p, i) => {
    if (typeof p === 'string' && taken.has(p))
      problems.push(
        `servers[${i}].path: "${p}" is an endpoint's server card path while serverCards.enabled is true; ` +
          'move the server or turn server cards off',
      );
  });
}
