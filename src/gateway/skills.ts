// SEP-2640's skills (`io.modelcontextprotocol/skills`) through the gateway: skills/list merged
// over every upstream that declares the extension, skills/get, resources/read of a skill's files
// and resources/directory/read, each routed to the upstream whose skill it is.
//
// Skills are not kept in the catalog: a list walks each upstream's pages when a client asks (in
// config order, deduplicated by the URI clients see, the first upstream keeping a clash), so no
// refresh or list_changed is needed and every replica answers alike. A skill's URIs are
// prefixed as its upstream's resource URIs are (resource-uris.ts: `skill://<prefix>/<path>`),
// so a prefixed skill stays a `skill://` URI and names its upstream.
//
// Digests: a file read through the gateway whose bytes do not hash to the digest its upstream
// lists is refused (SKILL_DIGEST_MISMATCH), not flagged: a host must not load such a file, and a
// gateway that passed it on would make every client find that out alone.
import { createHash } from 'node:crypto';
import { SKILL_LIST_MAX_PAGES } from '../config/limits.js';
import { GatewayError, UpstreamRpcError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { DIRECTORY_READ, SKILLS_EXTENSION, SKILLS_GET, SKILLS_LIST } from '../jsonrpc/meta-keys.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { globPattern } from '../config/servers.js';
import type { Forwarder } from './forwarder.js';
import { paginate } from './pagination.js';
import type { RequestEvents } from './request-events.js';
import type { ResultStep } from './request-chain.js';
import { requireString, resourceNotFound } from './request-params.js';
import { isSkillUri, prefixedUri, unprefixedUri, type ResourceUris } from './resource-uris.js';
import type { ServerView } from './server-views.js';
import { upstreamInfo, type UpstreamEntry } from './upstream-entry.js';

/** The file every skill's URI names. */
const SKILL_FILE = 'SKILL.md';

type Entry = Record<string, unknown>;

export interface SkillParts {
  upstreams: ReadonlyMap<string, UpstreamEntry>;
  forwarder: Forwarder;
  events: RequestEvents;
  uris: ResourceUris;
  pageSize: number;
}

/** One upstream's skill: its own entry, and the entry as clients see it. */
interface Listed {
  upstream: string;
  own: Entry;
  exposed: Entry;
}

/** A 2026-07-28 result's caching fields, merged over the upstreams that gave them. */
interface Hints {
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

/** The directory a skill's files sit under: its SKILL.md URI without the file name. */
function rootOf(skillUri: string): string {
  return skillUri.endsWith(SKILL_FILE) ? skillUri.slice(0, -SKILL_FILE.length) : `${skillUri}/`;
}

/** The `sha256:<hex>` of a resources/read content item: its text as UTF-8, or its blob decoded. */
export function digestOf(content: unknown): string | undefined {
  if (!isObject(content)) return undefined;
  const bytes =
    typeof content.text === 'string'
      ? Buffer.from(content.text, 'utf8')
      : typeof content.blob === 'string'
        ? Buffer.from(content.blob, 'base64')
        : undefined;
  return bytes && `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function mergeHints(into: Hints, result: McpResult): void {
  if (typeof result.ttlMs === 'number' && result.ttlMs >= 0)
    into.ttlMs = Math.min(into.ttlMs ?? result.ttlMs, result.ttlMs);
  if (result.cacheScope === 'private') into.cacheScope = 'private';
  else if (result.cacheScope === 'public') into.cacheScope ??= 'public';
}

/** The caching fields a stateless client gets (result-shape.ts bounds them); a 2025 session gets none. */
function withHints(ctx: RequestContext, result: McpResult, hints: Hints): McpResult {
  return ctx.stateless ? { ...result, ...hints } : result;
}

/** MCP 2025's "resource not found", which an upstream answers for a skill or file it lacks. */
const UPSTREAM_NOT_FOUND = -32002;

/**
 * The upstream's call, its "not found" answered as the gateway's own with the URI the client named (the
 * upstream's error names its own URI, which the client never sent).
 */
async function named(ctx: RequestContext, uri: string, call: Promise<McpResult>): Promise<McpResult> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof UpstreamRpcError && err.error.code === UPSTREAM_NOT_FOUND) throw resourceNotFound(ctx, uri);
    throw err;
  }
}

export class SkillMethods {
  constructor(private readonly parts: SkillParts) {}

  /** The method handlers, for the method table. */
  handlers(): Array<[string, ResultStep]> {
    return [
      [SKILLS_LIST, (ctx, request, view) => this.#list(ctx, request, view)],
      [SKILLS_GET, (ctx, request, view) => this.#get(ctx, request, view)],
      [DIRECTORY_READ, (ctx, request, view) => this.#directory(ctx, request, view)],
    ];
  }

  #forward(ctx: RequestContext, request: JsonRpcRequest, upstream: string, uri: string, original: string) {
    return named(ctx, uri, this.parts.forwarder.forward(ctx, request, upstream, { ...request.params, uri: original }));
  }

  /**
   * Whether a `skill://` read is the skills' to route: some upstream declares the extension, and the catalog lists
   * the URI (`listedBy`) of none that does not (a server that lists such resources without the extension).
   */
  serves(listedBy: string | undefined): boolean {
    const offering = this.#offering();
    return offering.length > 0 && (listedBy === undefined || offering.some(([name]) => name === listedBy));
  }

  /** Upstreams that are up and declare the extension, in config order, with its settings. */
  #offering(): Array<[string, Entry]> {
    const out: Array<[string, Entry]> = [];
    for (const [name, entry] of this.parts.upstreams) {
      const extensions = upstreamInfo(entry)?.capabilities.extensions;
      const settings = isObject(extensions) ? extensions[SKILLS_EXTENSION] : undefined;
      if (isObject(settings)) out.push([name, settings]);
    }
    return out;
  }

  #out(upstream: string, uri: unknown): unknown {
    const prefix = this.parts.uris.prefixOf(upstream);
    return prefix !== undefined && typeof uri === 'string' && isSkillUri(uri) ? prefixedUri(prefix, uri) : uri;
  }

  /** A skill entry as clients see it: its URI and its files' URIs prefixed; the frontmatter as it is. */
  #exposed(upstream: string, skill: Entry): Entry {
    const resources = Array.isArray(skill.resources)
      ? skill.resources.map((r: unknown) => (isObject(r) ? { ...r, uri: this.#out(upstream, r.uri) } : r))
      : skill.resources;
    return { ...skill, uri: this.#out(upstream, skill.uri), resources };
  }

  /** Every page of one upstream's skills/list, bounded; an entry without a string URI is left out. */
  async #listOf(ctx: RequestContext, request: JsonRpcRequest, upstream: string, hints: Hints): Promise<Listed[]> {
    const listed: Listed[] = [];
    // The client's cursor is the gateway's (over the merged list), never an upstream's.
    const { cursor: _merged, ...base } = request.params ?? {};
    let cursor: unknown;
    for (let page = 0; page < SKILL_LIST_MAX_PAGES; page++) {
      const id = `${String(request.id)}:skills:${upstream}:${page}`;
      const params = typeof cursor === 'string' ? { ...base, cursor } : base;
      const derived = this.parts.events.derive(request, { ...request, method: SKILLS_LIST, id, params });
      const result = await this.parts.forwarder.forward(ctx, derived, upstream, derived.params);
      mergeHints(hints, result);
      const skills: unknown[] = Array.isArray(result.skills) ? result.skills : [];
      for (const s of skills)
        if (isObject(s) && typeof s.uri === 'string')
          listed.push({ upstream, own: s, exposed: this.#exposed(upstream, s) });
      cursor = result.nextCursor;
      if (typeof cursor !== 'string' || cursor === '') break;
    }
    return listed;
  }

  /** The merged list: an upstream that fails to list is left out (as the catalog leaves out one that is down). */
  async #all(ctx: RequestContext, request: JsonRpcRequest, only?: string): Promise<{ listed: Listed[]; hints: Hints }> {
    const hints: Hints = {};
    const names = this.#offering()
      .map(([name]) => name)
      .filter((n) => only === undefined || n === only);
    const settled = await Promise.allSettled(names.map((name) => this.#listOf(ctx, request, name, hints)));
    const seen = new Set<string>();
    const listed: Listed[] = [];
    for (const s of settled) {
      if (s.status !== 'fulfilled') continue;
      for (const l of s.value) {
        const uri = String(l.exposed.uri);
        if (seen.has(uri)) continue;
        seen.add(uri);
        listed.push(l);
      }
    }
    return { listed, hints };
  }

  async #list(ctx: RequestContext, request: JsonRpcRequest, view: ServerView | undefined): Promise<McpResult> {
    const { listed, hints } = await this.#all(ctx, request);
    const visible = listed.map((l) => l.exposed).filter((s) => selects(view, String(s.uri)));
    const { page, nextCursor } = paginate(visible, request.params?.cursor, this.parts.pageSize);
    return withHints(ctx, nextCursor === undefined ? { skills: page } : { skills: page, nextCursor }, hints);
  }

  /**
   * Which upstream a skill URI a client names is, and its own URI there. A prefix names its upstream
   * (one that is configured but down or no longer offers skills: UPSTREAM_UNAVAILABLE); an unprefixed
   * URI is the first unprefixed upstream's whose listed skill holds it, else the first unprefixed one's.
   */
  async #route(
    ctx: RequestContext,
    request: JsonRpcRequest,
    uri: string,
  ): Promise<{ upstream: string; original: string }> {
    if (!isSkillUri(uri)) throw resourceNotFound(ctx, uri);
    const offering = new Set(this.#offering().map(([name]) => name));
    for (const name of this.parts.upstreams.keys()) {
      const prefix = this.parts.uris.prefixOf(name);
      const original = prefix === undefined ? undefined : unprefixedUri(prefix, uri);
      if (original === undefined) continue;
      if (!offering.has(name))
        throw new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${name} offers no skills now`, {
          upstream: name,
          uri,
        });
      return { upstream: name, original };
    }
    const plain = [...offering].filter((name) => this.parts.uris.prefixOf(name) === undefined);
    if (plain.length === 0) throw resourceNotFound(ctx, uri);
    if (plain.length > 1) {
      const { listed } = await this.#all(ctx, request);
      const holder = listed.find((l) => plain.includes(l.upstream) && uri.startsWith(rootOf(String(l.own.uri))));
      if (holder) return { upstream: holder.upstream, original: uri };
    }
    return { upstream: plain[0]!, original: uri };
  }

  async #get(ctx: RequestContext, request: JsonRpcRequest, view: ServerView | undefined): Promise<McpResult> {
    const uri = requireString(request.params, 'uri');
    if (!selects(view, uri)) throw resourceNotFound(ctx, uri);
    const { upstream, original } = await this.#route(ctx, request, uri);
    const result = await this.#forward(ctx, request, upstream, uri, original);
    if (!isObject(result.skill)) throw resourceNotFound(ctx, uri);
    const hints: Hints = {};
    mergeHints(hints, result);
    return withHints(ctx, { skill: this.#exposed(upstream, result.skill) }, hints);
  }

  /**
   * resources/read of a `skill://` URI: the file comes from its upstream, checked against the
   * digest that upstream's listed skill gives it (a file no listed skill lists, or a skill whose
   * files are `dynamic`, has no digest to check). In a virtual server, a file of a skill it selects.
   */
  async read(ctx: RequestContext, request: JsonRpcRequest, view: ServerView | undefined): Promise<McpResult> {
    const uri = requireString(request.params, 'uri');
    const { upstream, original } = await this.#route(ctx, request, uri);
    const { listed } = await this.#all(ctx, request, upstream);
    const holder = listed.find((l) => original.startsWith(rootOf(String(l.own.uri))));
    if (view && !(holder && selects(view, String(holder.exposed.uri)))) throw resourceNotFound(ctx, uri);
    const result = await this.#forward(ctx, request, upstream, uri, original);
    const file = Array.isArray(holder?.own.resources)
      ? holder.own.resources.find((r: unknown) => isObject(r) && r.uri === original)
      : undefined;
    if (isObject(file) && typeof file.digest === 'string') {
      const contents: unknown[] = Array.isArray(result.contents) ? result.contents : [];
      const served = digestOf(contents.find((c) => isObject(c) && c.uri === original) ?? contents[0]);
      if (served !== file.digest)
        throw new GatewayError('SKILL_DIGEST_MISMATCH', undefined, { upstream, uri, listed: file.digest, served });
    }
    return this.parts.uris.result(upstream, 'resources/read', result);
  }

  /** resources/directory/read, for an upstream that declares `directoryRead`; its cursors pass as they are. */
  async #directory(ctx: RequestContext, request: JsonRpcRequest, view: ServerView | undefined): Promise<McpResult> {
    const uri = requireString(request.params, 'uri');
    const { upstream, original } = await this.#route(ctx, request, uri);
    if (this.#offering().find(([name]) => name === upstream)?.[1].directoryRead !== true)
      throw new GatewayError(ctx.stateless ? 'MODERN_METHOD_NOT_FOUND' : 'METHOD_NOT_FOUND', `${DIRECTORY_READ}`, {
        upstream,
      });
    if (view) {
      const { listed } = await this.#all(ctx, request, upstream);
      const dir = original.endsWith('/') ? original : `${original}/`;
      const holder = listed.find((l) => dir.startsWith(rootOf(String(l.own.uri))));
      if (!(holder && selects(view, String(holder.exposed.uri)))) throw resourceNotFound(ctx, uri);
    }
    const result = await this.#forward(ctx, request, upstream, uri, original);
    const resources: unknown[] = Array.isArray(result.resources) ? result.resources : [];
    const out: McpResult = {
      ...result,
      resources: resources.map((r) => (isObject(r) ? { ...r, uri: this.#out(upstream, r.uri) } : r)),
    };
    return ctx.stateless ? out : withoutHints(out);
  }
}

function withoutHints(result: McpResult): McpResult {
  const { ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
  return rest;
}

/** Whether a virtual server selects the skill whose SKILL.md clients see as `uri` (the main path: every one). */
function selects(view: ServerView | undefined, uri: string): boolean {
  if (!view) return true;
  return (view.config.skills ?? []).some((g) => globPattern(g).test(uri));
}
