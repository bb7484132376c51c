// Virtual servers (`servers:` in the config) as views over the one shared catalog: what each
// selects (globs over exposed names and URIs) and how it presents its tools (overrides), applied
// to its lists and to the calls made on it. A view holds no upstream state of its own: every
// server shares the catalog, its workers and its refreshes; the view of each catalog version is
// computed once, on first use.
import type { ServerEntryConfig, ToolOverrideConfig } from '../config/schema.js';
import { globPattern } from '../config/servers.js';
import type { Glob } from '../config/tool-filter.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { Identity } from '../contracts/authenticator.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { MirroredParam } from '../contracts/mcp-handler.js';
import type { Catalog, CatalogReader, ListKind } from './catalog.js';
import { isSkillUri, uiResourceOf } from './resource-uris.js';

type Entry = Record<string, unknown>;

interface ViewLists {
  readonly lists: Record<ListKind, ReadonlyArray<Entry>>;
}

/** One virtual server: its selection and overrides, and who may use it. */
export class ServerView {
  readonly name: string;
  readonly path: string;
  readonly #principals: ReadonlySet<string>;
  readonly #requiredScopes: readonly string[];
  readonly #tools: Glob[];
  readonly #prompts: Glob[];
  readonly #resources: Glob[];
  readonly #overrides: ReadonlyMap<string, ToolOverrideConfig>;
  /** A new name → the exposed name it stands for. */
  readonly #renamed = new Map<string, string>();
  readonly #cache = new WeakMap<Catalog, ViewLists>();

  constructor(readonly config: ServerEntryConfig) {
    this.name = config.name ?? config.path;
    this.path = normalizePath(config.path);
    this.#principals = new Set(config.principals ?? []);
    this.#requiredScopes = config.requiredScopes ?? [];
    this.#tools = (config.tools ?? []).map(globPattern);
    this.#prompts = (config.prompts ?? []).map(globPattern);
    this.#resources = (config.resources ?? []).map(globPattern);
    this.#overrides = new Map(Object.entries(config.overrides ?? {}));
    for (const [exposed, o] of this.#overrides)
      if (o.name !== undefined && o.name !== exposed) this.#renamed.set(o.name, exposed);
  }

  /** Throws a 403 when `identity` is not among the principals, or lacks a required scope. */
  admit(identity: Identity | undefined): void {
    if (this.#principals.size > 0 && !(identity && allowed(this.#principals, identity.principal))) {
      throw new GatewayError(
        'SERVER_FORBIDDEN',
        `Forbidden: ${identity ? `"${identity.principal}"` : 'an anonymous client'} may not use the server at ` +
          `${this.path}`,
      );
    }
    const missing = this.#requiredScopes.filter((s) => !identity?.scopes.has(s));
    if (missing.length > 0)
      throw new GatewayError(
        'SERVER_FORBIDDEN',
        `Forbidden: the server at ${this.path} needs the scope ${missing.join(' ')}`,
      );
  }

  selectsTool(exposed: string): boolean {
    return this.#tools.some((p) => p.test(exposed));
  }

  selectsPrompt(exposed: string): boolean {
    return this.#prompts.some((p) => p.test(exposed));
  }

  /** A resource URI (or template) as clients see it. */
  selectsResource(uri: string): boolean {
    return this.#resources.some((p) => p.test(uri));
  }

  /** The exposed name a tool named `name` on this server stands for; undefined: none here. */
  exposedTool(name: string): string | undefined {
    const renamed = this.#renamed.get(name);
    if (renamed !== undefined) return renamed;
    // A tool renamed here is known by its new name only.
    if (this.#overrides.get(name)?.name !== undefined && this.#overrides.get(name)?.name !== name) return undefined;
    return this.selectsTool(name) ? name : undefined;
  }

  /** The arguments a call sends upstream: the client's, with defaults filled in and fixed ones forced. */
  callArguments(exposed: string, args: unknown): unknown {
    const o = this.#overrides.get(exposed)?.arguments;
    if (!o || (Object.keys(o.fixed ?? {}).length === 0 && Object.keys(o.defaults ?? {}).length === 0)) return args;
    const given = isObject(args) ? args : {};
    return { ...o.defaults, ...given, ...o.fixed };
  }

  /** The mirrored headers of a tool here: its fixed arguments are no longer the client's to send. */
  mirrored(exposed: string, params: readonly MirroredParam[]): readonly MirroredParam[] {
    const fixed = this.#overrides.get(exposed)?.arguments?.fixed;
    if (!fixed || params.length === 0) return params;
    return params.filter((p) => !(p.path[0]! in fixed));
  }

  /** This server's entries of one list, for one catalog version. */
  list(catalog: Catalog, kind: ListKind): ReadonlyArray<Entry> {
    let lists = this.#cache.get(catalog);
    if (!lists) {
      lists = { lists: this.#build(catalog) };
      this.#cache.set(catalog, lists);
    }
    return lists.lists[kind];
  }

  #build(catalog: Catalog): Record<ListKind, ReadonlyArray<Entry>> {
    const tools: Entry[] = [];
    for (const tool of catalog.list('tools')) {
      const name = String(tool.name);
      if (!this.selectsTool(name)) continue;
      const o = this.#overrides.get(name);
      tools.push(o ? overridden(tool, o) : tool);
    }
    return {
      tools,
      prompts: catalog.list('prompts').filter((p) => this.selectsPrompt(String(p.name))),
      resources: catalog.list('resources').filter((r) => this.selectsResource(String(r.uri))),
      resourceTemplates: catalog.list('resourceTemplates').filter((t) => this.selectsResource(String(t.uriTemplate))),
    };
  }

  /**
   * A request as the shared catalog knows it: tool and prompt names mapped back to exposed
   * names, a tool's arguments forced and filled. What this server does not offer fails as it
   * would if it did not exist at all.
   */
  rewrite(ctx: RequestContext, request: JsonRpcRequest, catalog: Catalog): JsonRpcRequest {
    const params = request.params;
    switch (request.method) {
      case 'tools/call': {
        if (typeof params?.name !== 'string') return request;
        const exposed = this.exposedTool(params.name);
        if (exposed === undefined || !catalog.tool(exposed))
          throw new GatewayError('INVALID_PARAMS', `Unknown tool: ${params.name}`);
        const args = this.callArguments(exposed, params.arguments);
        return { ...request, params: { ...params, name: exposed, ...(args === undefined ? {} : { arguments: args }) } };
      }
      case 'prompts/get':
        if (typeof params?.name === 'string' && !this.selectsPrompt(params.name))
          throw new GatewayError('INVALID_PARAMS', `Unknown prompt: ${params.name}`);
        return request;
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        // A skill's files are selected by `skills` (gateway/skills.ts checks them).
        if (typeof params?.uri === 'string' && !this.selectsResource(params.uri) && !isSkillUri(params.uri))
          throw notFound(ctx, params.uri);
        return request;
      case 'completion/complete': {
        const ref = params?.ref;
        if (!isObject(ref)) return request;
        if (ref.type === 'ref/prompt' && typeof ref.name === 'string' && !this.selectsPrompt(ref.name))
          throw new GatewayError('INVALID_PARAMS', `Unknown prompt: ${ref.name}`);
        if (ref.type === 'ref/resource' && typeof ref.uri === 'string' && !this.selectsResource(ref.uri))
          throw notFound(ctx, ref.uri);
        return request;
      }
      default:
        return request;
    }
  }
}

/** A tool as a server presents it: renamed, described, annotated, without its fixed arguments. */
function overridden(tool: Entry, o: ToolOverrideConfig): Entry {
  const out: Entry = { ...tool };
  if (o.name !== undefined) out.name = o.name;
  if (o.title !== undefined) out.title = o.title;
  if (o.description !== undefined) out.description = o.description;
  if (o.annotations !== undefined)
    out.annotations = { ...(isObject(tool.annotations) ? tool.annotations : {}), ...o.annotations };
  const fixed = Object.keys(o.arguments?.fixed ?? {});
  if (fixed.length > 0 && isObject(tool.inputSchema)) out.inputSchema = withoutProperties(tool.inputSchema, fixed);
  return out;
}

function withoutProperties(schema: Entry, names: readonly string[]): Entry {
  const out: Entry = { ...schema };
  if (isObject(schema.properties)) {
    const properties = { ...schema.properties };
    for (const n of names) delete properties[n];
    out.properties = properties;
  }
  if (Array.isArray(schema.required)) out.required = schema.required.filter((r) => !names.includes(String(r)));
  return out;
}

/** A principal as configured: an API key's name or a token's `issuer subject`, or its subject alone. */
function allowed(principals: ReadonlySet<string>, principal: string): boolean {
  if (principals.has(principal)) return true;
  const space = principal.lastIndexOf(' ');
  return space !== -1 && principals.has(principal.slice(space + 1));
}

function notFound(ctx: RequestContext, uri: string): GatewayError {
  return new GatewayError(
    ctx.stateless ? 'MODERN_RESOURCE_NOT_FOUND' : 'RESOURCE_NOT_FOUND',
    `Resource not found: ${uri}`,
    { uri },
  );
}

export function normalizePath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/** The problems of a set of servers over a catalog: errors stop a start (or a reload), warnings are logged. */
export interface ViewProblems {
  errors: string[];
  warnings: string[];
}

/**
 * What needs the upstreams' catalogs to check: every override names a selected tool that exists,
 * its fixed arguments are in the tool's inputSchema, no name on a server is offered twice, and
 * (warnings) each glob selects something and each MCP App tool's UI resource is selected beside it.
 * `complete`: every upstream's lists are in the catalog; while one is missing, a name that is not
 * found may be that upstream's, so it is only a warning.
 */
export function viewProblems(servers: readonly ServerEntryConfig[], catalog: Catalog, complete: boolean): ViewProblems {
  const errors: string[] = [];
  const warnings: string[] = [];
  servers.forEach((s, i) => {
    const at = `servers[${i}]`;
    const view = new ServerView(s);
    for (const [exposed, o] of Object.entries(s.overrides ?? {})) {
      const where = `${at}.overrides.${exposed}`;
      const route = catalog.tool(exposed);
      const tool = catalog.list('tools').find((t) => t.name === exposed);
      if (!route) {
        (complete ? errors : warnings).push(
          `${where}: no tool "${exposed}" in the catalog (names are the exposed ones, prefix ` +
            `included)${closest(exposed, catalog)}`,
        );
        continue;
      }
      if (!view.selectsTool(exposed)) errors.push(`${where}: "${exposed}" is not selected by ${at}.tools`);
      const properties =
        tool && isObject(tool.inputSchema) && isObject(tool.inputSchema.properties)
          ? tool.inputSchema.properties
          : undefined;
      for (const kind of ['fixed', 'defaults'] as const) {
        for (const arg of Object.keys(o.arguments?.[kind] ?? {})) {
          if (tool && !(properties && arg in properties))
            errors.push(
              `${where}.arguments.${kind}.${arg}: tool "${exposed}" has no argument "${arg}" in its inputSchema`,
            );
        }
      }
    }
    const offered = new Map<string, string>();
    for (const t of catalog.list('tools')) {
      const exposed = String(t.name);
      if (!view.selectsTool(exposed)) continue;
      // Own keys only: a tool named "constructor" has no override.
      const name =
        (s.overrides && Object.hasOwn(s.overrides, exposed) ? s.overrides[exposed]!.name : undefined) ?? exposed;
      const twin = offered.get(name);
      if (twin !== undefined)
        errors.push(
          `${at}: two tools are offered as "${name}" (${twin} and ${exposed}): rename one of them in ${at}.overrides`,
        );
      offered.set(name, exposed);
      // An MCP App's tool without its app: a host finds the tool, then cannot read what it names.
      const app = uiResourceOf(t);
      if (app !== undefined && !view.selectsResource(app))
        warnings.push(`${at}: tool "${exposed}" names its app ${app}, which ${at}.resources does not select`);
    }
    globWarnings(s, at, catalog, warnings);
  });
  return { errors, warnings };
}

function globWarnings(s: ServerEntryConfig, at: string, catalog: Catalog, warnings: string[]): void {
  const names = (kind: ListKind, key: string) => catalog.list(kind).map((e) => String(e[key]));
  const kinds: Array<[string, string[] | undefined, string[]]> = [
    ['tools', s.tools, names('tools', 'name')],
    ['prompts', s.prompts, names('prompts', 'name')],
    ['resources', s.resources, [...names('resources', 'uri'), ...names('resourceTemplates', 'uriTemplate')]],
  ];
  for (const [kind, globs, all] of kinds) {
    (globs ?? []).forEach((g, j) => {
      const p = globPattern(g);
      if (!all.some((n) => p.test(n))) warnings.push(`${at}.${kind}[${j}]: "${g}" selects nothing in the catalog`);
    });
  }
}

function closest(name: string, catalog: Catalog): string {
  const tail = name.includes('__') ? name.slice(name.lastIndexOf('__') + 2) : name;
  const like = catalog
    .list('tools')
    .map((t) => String(t.name))
    .filter((n) => n === tail || n.endsWith(`__${tail}`));
  return like.length > 0 ? ` (did you mean ${like.map((n) => `"${n}"`).join(', ')}?)` : '';
}

/** The virtual servers in force, by path; replaced whole (a reload), never edited in place. */
export class ServerViews {
  #views: ReadonlyMap<string, ServerView> = new Map();
  #configs: readonly ServerEntryConfig[] = [];

  constructor(servers: readonly ServerEntryConfig[]) {
    this.replace(servers);
  }

  get configs(): readonly ServerEntryConfig[] {
    return this.#configs;
  }

  get(path: string): ServerView | undefined {
    return this.#views.get(path);
  }

  paths(): string[] {
    return [...this.#views.keys()];
  }

  replace(servers: readonly ServerEntryConfig[]): void {
    this.#views = new Map(servers.map((s) => [normalizePath(s.path), new ServerView(s)]));
    this.#configs = servers;
  }
}

/** A virtual server (servers[]) in force: its path, its view, its catalog as its clients see it, and its sessions'. */
export interface ServerCatalogEntry {
  path: string;
  /** Looked up per call: undefined once a reload took the server away. */
  view: () => ServerView | undefined;
  catalog: () => CatalogReader;
  sessions: () => CatalogReader[];
}

/** A virtual server's catalog as its clients see it: its selection, under the names it gives tools. */
export function viewCatalog(view: ServerView | undefined, catalog: Catalog): CatalogReader {
  return {
    list: (kind) => (view ? view.list(catalog, kind) : []),
    tool: (name) => {
      const exposed = view?.exposedTool(name);
      return exposed === undefined ? undefined : catalog.tool(exposed);
    },
    prompt: (name) => (view?.selectsPrompt(name) ? catalog.prompt(name) : undefined),
    resource: (uri) => (view?.selectsResource(uri) ? catalog.resource(uri) : undefined),
  };
}

/** servers[] that do not fit the catalog: nothing was changed. */
export class ServerViewsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration (servers):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ServerViewsError';
  }
}
