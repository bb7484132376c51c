// Server cards (config `serverCards`): GET <endpoint>/server-card for the main path and each
// virtual server's, and GET /.well-known/ai-catalog.json listing the cards a caller may see.
// A card is read from the endpoint as it is now (its view after the last reload, the catalog's
// tool count), so its ETag changes as soon as what it says does. With auth on, a card is let
// through the same checks as its endpoint (the endpoint's 401 or 403), unless it is public.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { legacySseSettings } from '../config/server.js';
import { cardPath } from '../config/server-cards.js';
import type { GatewayConfig } from '../config/schema.js';
import type { Authenticator, Identity } from '../contracts/authenticator.js';
import type { CatalogReader } from '../gateway/catalog.js';
import type { ServerCatalogEntry } from '../gateway/server-views.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { DataPathEvents } from '../observability/events.js';
import { replyWithError, replyWithFailure } from '../transport/error-reply.js';
import { header } from '../transport/http-headers.js';
import {
  CARD_TYPE,
  CATALOG_TYPE,
  cardDocument,
  cardName,
  catalogDocument,
  etagOf,
  matchesEtag,
  reverseDns,
  type CardEndpoint,
  type CardSite,
} from './card-documents.js';

export interface ServerCardsOptions {
  /** The start-up config: serverCards, path, auth.mode and legacySse are bound at start. */
  config: GatewayConfig;
  /** Its serverPaths when the routes are made are the ones with routes (one a reload adds waits for a restart). */
  server: { catalog: CatalogReader; serverPaths: readonly string[]; serverCatalogs(): ServerCatalogEntry[] };
  version: string;
  auth: Authenticator | undefined;
  isReady: () => boolean;
  diagnostics: DataPathEvents;
}

/** An endpoint as its card is served now: what the card says, and who may read it. */
interface LiveEndpoint {
  card: CardEndpoint;
  /** Served to anyone, authenticated or not. */
  public: boolean;
  /** A virtual server's admission (principals, requiredScopes): throws its 403. */
  admit?: (identity: Identity | undefined) => void;
}

const SUFFIX = '/server-card';
const CATALOG_PATH = '/.well-known/ai-catalog.json';

/**
 * A GET for `<anything>/server-card` that no card route serves: 404 SERVER_CARD_NOT_FOUND (a
 * typed error), not the generic ROUTE_NOT_FOUND. Registered before endpoint-methods.ts's hook,
 * which would answer it first.
 */
export function registerCardNotFound(app: FastifyInstance, config: GatewayConfig, diagnostics: DataPathEvents): void {
  if (!config.serverCards.enabled) return;
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404 || (request.method !== 'GET' && request.method !== 'HEAD')) return done();
    const q = request.url.indexOf('?');
    const path = q === -1 ? request.url : request.url.slice(0, q);
    if (!path.endsWith(SUFFIX)) return done();
    replyWithError(reply, diagnostics, notFound(path.slice(0, -SUFFIX.length) || '/'));
  });
}

/** The card routes of every endpoint with a route, and the catalog; nothing when serverCards is off. */
export function registerServerCards(app: FastifyInstance, o: ServerCardsOptions): void {
  const cards = o.config.serverCards;
  if (!cards.enabled) return;
  const routed = [...o.server.serverPaths];
  const endpoints = liveEndpoints(o, routed, legacySseSettings(o.config.legacySse)?.ssePath);
  const site = (request: FastifyRequest): CardSite => {
    const origin = cards.baseUrl ?? requestOrigin(request);
    return {
      origin,
      namespace: cards.namespace ?? reverseDns(new URL(origin).hostname),
      version: o.version,
      auth: o.config.auth.mode,
    };
  };
  for (const path of [o.config.path, ...routed]) {
    app.get(cardPath(path), async (request, reply) => {
      if (!ready(o, reply)) return reply;
      const endpoint = endpoints().find((e) => e.card.path === path);
      if (!endpoint) return replyWithError(reply, o.diagnostics, notFound(path));
      if (!endpoint.public && o.auth) {
        try {
          // Not `admit?.(await …)`: an optional call skips its arguments, the authentication with them.
          const identity = await o.auth.authenticate(header(request, 'authorization'));
          endpoint.admit?.(identity);
        } catch (err) {
          replyWithFailure(reply, o.diagnostics, err);
          return reply;
        }
      }
      const shared = endpoint.public || !o.auth;
      return send(request, reply, cardDocument(endpoint.card, site(request)), CARD_TYPE, cards.maxAgeSeconds, shared);
    });
  }
  app.get(CATALOG_PATH, async (request, reply) => {
    if (!ready(o, reply)) return reply;
    const identity = await callerOf(o.auth, header(request, 'authorization'));
    const visible = endpoints().filter((e) => e.public || !o.auth || admitted(e, identity));
    const document = catalogDocument(
      visible.map((e) => e.card),
      site(request),
    );
    // With auth on, who asks decides what is listed: no shared cache may hand one caller's list to another.
    return send(request, reply, document, CATALOG_TYPE, cards.maxAgeSeconds, !o.auth);
  });
}

/** The endpoints that have card routes, as they are now: the main one, then each virtual server still in force. */
function liveEndpoints(
  o: ServerCardsOptions,
  routes: readonly string[],
  legacySse: string | undefined,
): () => LiveEndpoint[] {
  const cards = o.config.serverCards;
  const routed = new Set(routes);
  return () => {
    const main: LiveEndpoint = {
      card: {
        path: o.config.path,
        name: 'mcp-gateway',
        title: cards.title,
        description: cards.description ?? 'MCP gateway: one endpoint over the tools of all its upstreams',
        toolCount: o.server.catalog.list('tools').length,
        legacySse,
      },
      public: cards.public,
    };
    const servers: LiveEndpoint[] = [];
    for (const entry of o.server.serverCatalogs()) {
      const view = entry.view();
      if (!view || !routed.has(entry.path)) continue;
      const card = view.config.card ?? {};
      servers.push({
        card: {
          path: entry.path,
          name: cardName(view.config.name, entry.path),
          title: card.title,
          description: card.description ?? `Curated MCP server "${view.name}" of an MCP gateway`.slice(0, 100),
          toolCount: entry.catalog().list('tools').length,
          legacySse: undefined,
        },
        public: card.public ?? cards.public,
        admit: (identity) => view.admit(identity),
      });
    }
    return [main, ...servers];
  };
}

/** Not ready (upstreams still starting): the tool counts would be wrong, so 503 as the endpoints answer. */
function ready(o: ServerCardsOptions, reply: FastifyReply): boolean {
  if (o.isReady()) return true;
  replyWithError(reply, o.diagnostics, new GatewayError('NOT_READY', undefined, { retryAfterMs: 1000 }));
  return false;
}

/** Who asks for the catalog, if anyone the gateway knows: a bad or absent token lists the public cards only. */
async function callerOf(auth: Authenticator | undefined, authorization: string | undefined) {
  if (!auth || authorization === undefined) return undefined;
  return await auth.authenticate(authorization).catch(() => undefined);
}

function admitted(endpoint: LiveEndpoint, identity: Identity | undefined): boolean {
  if (!identity) return false;
  try {
    endpoint.admit?.(identity);
    return true;
  } catch {
    return false;
  }
}

/** A document with its ETag and caching headers, or 304 when the client's tag is still the one. */
function send(
  request: FastifyRequest,
  reply: FastifyReply,
  document: Record<string, unknown>,
  type: string,
  maxAge: number,
  shared: boolean,
): FastifyReply {
  const body = JSON.stringify(document);
  const etag = etagOf(body);
  reply.header('etag', etag).header('cache-control', `${shared ? 'public' : 'private'}, max-age=${maxAge}`);
  if (!shared) reply.header('vary', appendVary(reply.getHeader('vary'), 'Authorization'));
  if (matchesEtag(header(request, 'if-none-match'), etag)) return reply.code(304).send();
  // A Buffer: Fastify would add `; charset=utf-8` to a string's type, and the draft names the type bare.
  return reply.header('content-type', type).send(Buffer.from(body));
}

function appendVary(current: unknown, name: string): string {
  return typeof current === 'string' && current !== '' ? `${current}, ${name}` : name;
}

/** The origin a client reached: its Host header and the connection's scheme (serverCards.baseUrl overrides it). */
function requestOrigin(request: FastifyRequest): string {
  // HTTP/1.0 may send no Host: then the card names localhost rather than a host nobody asked for.
  if (!request.host) return `${request.protocol}://localhost`;
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    return `${request.protocol}://localhost`;
  }
}

function notFound(path: string): GatewayError {
  return new GatewayError(
    'SERVER_CARD_NOT_FOUND',
    `Not Found: no MCP endpoint at ${JSON.stringify(path.slice(0, 200))}`,
  );
}
