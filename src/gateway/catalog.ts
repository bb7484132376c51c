import { isObject } from '../jsonrpc/messages.js';
import { LIST_METHOD, type ListKind } from '../jsonrpc/list-methods.js';
import type { ArgumentCheck, ArgumentChecks } from './argument-validator.js';
import type { MirroredParam } from '../contracts/mcp-handler.js';
import { mirroredParams } from '../stateless/mirrored-params.js';
import { prefixedUri, toolWithUiUris, unprefixedUri } from './resource-uris.js';
import { LinearPattern, PatternRefused, PatternTooCostly, withinBudget } from './linear-regexp.js';
import type { PinFinding, PinPolicy, PinVerdict } from './pin-policy.js';

/**
 * What finding the template of one URI may cost, in pattern units x characters. A template's
 * pattern (literals, four kinds of wildcard, no counted repeat) keeps RE2's DFA small, so this
 * is tens of ms; a URI too long for it matches no template.
 */
const MAX_TEMPLATE_WORK = 1 << 24;

/** The four lists an MCP server publishes, and the field that names an entry in each. */
export const LISTS = {
  tools: { method: LIST_METHOD.tools, field: 'tools', key: 'name', capability: 'tools' },
  prompts: { method: LIST_METHOD.prompts, field: 'prompts', key: 'name', capability: 'prompts' },
  resources: { method: LIST_METHOD.resources, field: 'resources', key: 'uri', capability: 'resources' },
  resourceTemplates: {
    method: LIST_METHOD.resourceTemplates,
    field: 'resourceTemplates',
    key: 'uriTemplate',
    capability: 'resources',
  },
} as const satisfies Record<ListKind, unknown>;

export type { ListKind };

/** Where a client-visible name really lives. */
export interface Route {
  upstream: string;
  /** The name (or URI) the upstream itself uses. */
  original: string;
  /** A tool's arguments that 2026-07-28 clients mirror into headers (none: undefined). */
  mirrored?: readonly MirroredParam[];
  /** A tool's check of its arguments against its inputSchema (none: nothing to check). */
  arguments?: ArgumentCheck;
  /** pinning enforce: a definition the lock does not pin; it is listed nowhere and its calls get this error. */
  refused?: PinVerdict;
}

/** A definition the pin lock does not pin, as this catalog has it (status shows them): `name` as clients see it. */
export type PinFlag = PinFinding & { served: boolean };

export interface UpstreamLists {
  name: string;
  /** '' exposes names unchanged. */
  prefix: string;
  /**
   * Set (`resources: { uris: prefixed }`): its resource URIs and templates are offered as `<uriPrefix>+<uri>`
   * (`ui://<uriPrefix>+<rest>` for a `ui://` one), and its tools' UI resource references alike.
   */
  uriPrefix?: string;
  lists: Partial<Record<ListKind, Array<Record<string, unknown>>>>;
}

export class CatalogCollisionError extends Error {
  constructor(kind: ListKind, name: string, first: string, second: string) {
    // Names carry the prefix already; URIs only when asked to.
    const advice =
      kind === 'resources'
        ? `set \`resources: { uris: prefixed }\` on upstream "${second}" (or "${first}") so its URIs are offered ` +
          `as <prefix>+<uri>`
        : `give one of them another \`prefix\``;
    super(`${kind} name collision: "${name}" is offered by upstream "${first}" and by upstream "${second}"; ${advice}`);
    this.name = 'CatalogCollisionError';
  }
}

export const PREFIX_SEPARATOR = '__';

export function exposedName(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}${PREFIX_SEPARATOR}${name}`;
}

interface TemplateRoute extends Route {
  /** The prefix the gateway added to its URIs (`resources: { uris: prefixed }`); none: offered as they are. */
  uriPrefix: string | undefined;
  /** Matches the URIs the template can produce (RFC 6570 expressions as wildcards); none: too long to match. */
  pattern: LinearPattern | undefined;
  /** Characters outside expressions: the more, the more specific the template. */
  literalLength: number;
}

/**
 * A URI template as a regular expression over the whole URI. Servers often fill a simple
 * `{var}` with a value holding slashes (`file:///{path}`), so expressions match leniently;
 * what decides between templates is that their literal text must match, all of it.
 */
export function templatePattern(template: string): { pattern: LinearPattern | undefined; literalLength: number } {
  let source = '^';
  let literalLength = 0;
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const literal = open === -1 ? template.slice(i) : template.slice(i, open);
    source += literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    literalLength += literal.length;
    if (open === -1) break;
    const close = template.indexOf('}', open);
    if (close === -1) break;
    const op = template[open + 1];
    if (op === '+' || op === '#') source += '.*';
    else if (op === '?' || op === '&') source += '(?:[?&][^#]*)?';
    else if (op === '/') source += '(?:/[^?#]*)?';
    else source += '[^?#]*';
    i = close + 1;
  }
  // An upstream writes templates: V8's backtracking over many wildcards is exponential in the URI.
  return { pattern: linearOrNone(`${source}$`), literalLength };
}

function linearOrNone(source: string): LinearPattern | undefined {
  try {
    return LinearPattern.lazy(source);
  } catch (err) {
    if (err instanceof PatternRefused) return undefined;
    throw err;
  }
}

/**
 * The merged, namespaced view of every upstream's lists. Immutable: a refresh builds a new
 * catalog and swaps it in, so a request never sees half of one.
 */
export class Catalog {
  readonly #entries: Record<ListKind, Array<Record<string, unknown>>>;
  readonly #tools = new Map<string, Route>();
  readonly #prompts = new Map<string, Route>();
  readonly #resources = new Map<string, Route>();
  readonly #templates: TemplateRoute[] = [];
  readonly #checks: ArgumentChecks | undefined;
  readonly #pins: PinPolicy | undefined;
  readonly #flags: PinFlag[] = [];

  /**
   * `hidden` upstreams keep their routes but are left out of every list: a remote upstream that
   * is down disappears from the lists, while a client that still calls one of its tools gets
   * the upstream's own fail-fast error rather than "unknown tool". `checks` gives each tool
   * its arguments check; `pins` judges each tool and prompt against the pin lock.
   */
  constructor(
    upstreams: UpstreamLists[],
    hidden: ReadonlySet<string> = new Set(),
    checks?: ArgumentChecks,
    pins?: PinPolicy,
  ) {
    this.#checks = checks;
    this.#pins = pins?.active ? pins : undefined;
    this.#entries = { tools: [], prompts: [], resources: [], resourceTemplates: [] };
    // Sorted by upstream name, then by the upstream's own order: deterministic across replicas.
    const sorted = [...upstreams].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const u of sorted) {
      const listed = !hidden.has(u.name);
      for (const tool of u.lists.tools ?? []) this.#addNamed('tools', this.#tools, u, tool, listed);
      for (const prompt of u.lists.prompts ?? []) this.#addNamed('prompts', this.#prompts, u, prompt, listed);
      const exposeUri = u.uriPrefix === undefined ? undefined : (uri: string) => prefixedUri(u.uriPrefix!, uri);
      for (const resource of u.lists.resources ?? []) {
        const original = resource.uri;
        if (typeof original !== 'string') continue;
        const uri = exposeUri ? exposeUri(original) : original;
        const seen = this.#resources.get(uri);
        if (seen) throw new CatalogCollisionError('resources', uri, seen.upstream, u.name);
        this.#resources.set(uri, { upstream: u.name, original });
        if (listed) this.#entries.resources.push(exposeUri ? { ...resource, uri } : resource);
      }
      for (const template of u.lists.resourceTemplates ?? []) {
        const original = template.uriTemplate;
        if (typeof original !== 'string') continue;
        const t = exposeUri ? exposeUri(original) : original;
        this.#templates.push({
          upstream: u.name,
          original: t,
          uriPrefix: u.uriPrefix,
          ...templatePattern(t),
        });
        if (listed) this.#entries.resourceTemplates.push(exposeUri ? { ...template, uriTemplate: t } : template);
      }
    }
    // Most literal text first, so the most specific template wins.
    this.#templates.sort((a, b) => b.literalLength - a.literalLength);
  }

  list(kind: ListKind): ReadonlyArray<Record<string, unknown>> {
    return this.#entries[kind];
  }

  tool(name: string): Route | undefined {
    return this.#tools.get(name);
  }

  prompt(name: string): Route | undefined {
    return this.#prompts.get(name);
  }

  /** The definitions the pin lock does not pin, by the names clients see (served: warn; withheld: enforce). */
  pinFlags(): readonly PinFlag[] {
    return this.#flags;
  }

  /** The upstream serving `uri`: one that listed it, else one whose template matches it. */
  resource(uri: string): Route | undefined {
    const listed = this.#resources.get(uri);
    if (listed) return listed;
    const template = this.#template(uri);
    if (!template) return undefined;
    // A matching URI carries the template's literal start, prefix included, so it always comes off.
    const original = template.uriPrefix === undefined ? uri : unprefixedUri(template.uriPrefix, uri);
    return original === undefined ? undefined : { upstream: template.upstream, original };
  }

  #template(uri: string): TemplateRoute | undefined {
    try {
      const matches = (t: TemplateRoute) => t.literalLength > 0 && t.pattern?.test(uri) === true;
      return withinBudget(MAX_TEMPLATE_WORK, () => this.#templates.find(matches));
    } catch (err) {
      if (err instanceof PatternTooCostly || err instanceof PatternRefused) return undefined;
      throw err;
    }
  }

  #addNamed(
    kind: 'tools' | 'prompts',
    routes: Map<string, Route>,
    u: UpstreamLists,
    entry: Record<string, unknown>,
    listed: boolean,
  ): void {
    const original = entry.name;
    if (typeof original !== 'string' || original.length === 0) return;
    const name = exposedName(u.prefix, original);
    const seen = routes.get(name);
    if (seen) throw new CatalogCollisionError(kind, name, seen.upstream, u.name);
    const route: Route = { upstream: u.name, original };
    const finding = this.#pins?.judge(u.name, kind, entry);
    if (finding) this.#flags.push({ upstream: u.name, kind, name, ...finding, served: finding.mode === 'warn' });
    if (finding?.mode === 'enforce') {
      // Routed, so a call is told why it is refused rather than "unknown"; listed nowhere, checked never.
      route.refused = finding.verdict;
      routes.set(name, route);
      return;
    }
    if (kind === 'tools') {
      const mirrored = mirroredParams(entry.inputSchema);
      if (mirrored.length > 0) route.mirrored = mirrored;
      const check = this.#checks?.forTool(u.name, name, entry.inputSchema);
      if (check) route.arguments = check;
    }
    routes.set(name, route);
    if (!listed) return;
    // The tool names its UI resource as the client knows that resource (resource-uris.ts).
    const shown = kind === 'tools' && u.uriPrefix !== undefined ? toolWithUiUris(u.uriPrefix, entry) : entry;
    this.#entries[kind].push(u.prefix === '' ? shown : { ...shown, name });
  }
}

/** Reads a list page's entries, tolerating an upstream that omits the field. */
export function entriesOf(kind: ListKind, result: Record<string, unknown>): Array<Record<string, unknown>> {
  const value = result[LISTS[kind].field];
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** What reading a catalog takes: the gateway's whole one, or a virtual server's view of it. */
export type CatalogReader = Pick<Catalog, 'list' | 'tool' | 'prompt' | 'resource'>;
