// What the authorization policy is told of a request (policy/cedar-schema.ts names it all): the
// principal from the request context (and an API key's scopes from the config), the tool, prompt
// or resource from the catalog as the endpoint shows it, a call's arguments as strings.
import type { RequestContext } from '../contracts/request-context.js';
import type { PolicyPrincipal, PolicyRequest } from '../policy/policy-set.js';
import type { LivePolicy } from '../policy/live-policy.js';
import type { Catalog } from './catalog.js';
import type { ServerView } from './server-views.js';

type Resource = PolicyRequest['resource'];
type Entry = Record<string, unknown>;

/** MCP's own defaults for a tool that does not say (ToolAnnotations). */
const HINT_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

const MAIN = 'main';

/** A string as it is, anything else as its JSON (a claim, an argument). */
function text(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

function stringsOf(values: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return out;
  for (const [k, v] of Object.entries(values)) out[k] = text(v);
  return out;
}

function claimScopes(claims: Readonly<Record<string, unknown>>): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((s) => s !== '');
  return Array.isArray(claims.scp) ? claims.scp.map(String) : [];
}

export function principalOf(ctx: RequestContext, live: LivePolicy): PolicyPrincipal {
  const address = ctx.remoteAddress ?? '';
  if (ctx.principal === undefined) return { kind: 'anonymous', address };
  const claims = ctx.caller?.claims ?? {};
  return {
    kind: 'client',
    id: ctx.principal,
    name: typeof claims.sub === 'string' ? claims.sub : ctx.principal,
    scopes: live.keyScopes(ctx.principal) ?? claimScopes(claims),
    claims: stringsOf(claims),
    address,
  };
}

export function argumentsOf(args: unknown): Record<string, string> {
  return stringsOf(args);
}

export function endpointResource(view: ServerView | undefined): Resource {
  const server = view?.name ?? MAIN;
  return { type: 'Endpoint', id: server, attrs: { server } };
}

// Each catalog version's tools by name, built once per version (the list array is the version's).
const toolIndexes = new WeakMap<ReadonlyArray<Entry>, Map<string, Entry>>();

function toolEntry(catalog: Catalog, name: string): Entry | undefined {
  const list = catalog.list('tools');
  let index = toolIndexes.get(list);
  if (!index) {
    index = new Map(list.map((t) => [String(t.name), t]));
    toolIndexes.set(list, index);
  }
  return index.get(name);
}

/** `name` as the endpoint shows it; undefined: no upstream serves it there. */
export function toolResource(name: string, view: ServerView | undefined, catalog: Catalog): Resource | undefined {
  const exposed = view ? view.exposedTool(name) : name;
  const route = exposed === undefined ? undefined : catalog.tool(exposed);
  if (!route || exposed === undefined) return undefined;
  const annotations = toolEntry(catalog, exposed)?.annotations;
  const hints: Record<string, unknown> =
    typeof annotations === 'object' && annotations !== null ? { ...annotations } : {};
  const attrs: Record<string, string | boolean> = {
    name,
    upstream: route.upstream,
    original: route.original,
    server: view?.name ?? MAIN,
  };
  for (const [hint, fallback] of Object.entries(HINT_DEFAULTS))
    attrs[hint] = typeof hints[hint] === 'boolean' ? hints[hint] : fallback;
  return { type: 'Tool', id: name, attrs };
}

export function promptResource(name: string, view: ServerView | undefined, catalog: Catalog): Resource | undefined {
  const route = view && !view.selectsPrompt(name) ? undefined : catalog.prompt(name);
  if (!route) return undefined;
  return { type: 'Prompt', id: name, attrs: { name, upstream: route.upstream, server: view?.name ?? MAIN } };
}

export function resourceOf(uri: string, view: ServerView | undefined, catalog: Catalog): Resource | undefined {
  const route = view && !view.selectsResource(uri) ? undefined : catalog.resource(uri);
  if (!route) return undefined;
  return { type: 'Resource', id: uri, attrs: { uri, upstream: route.upstream, server: view?.name ?? MAIN } };
}
