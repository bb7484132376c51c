// The 2026-07-28 era's shapes at the gateway's edge: how a result leaves for a stateless client,
// and how a stateless request's params reach a 2025 upstream.
import { isObject } from '../jsonrpc/messages.js';
import { LIST_METHODS } from '../jsonrpc/list-methods.js';
import { DIRECTORY_READ, META, RESERVED_META_PREFIX, SKILLS_GET, SKILLS_LIST } from '../jsonrpc/meta-keys.js';
import type { CacheHints, McpResult } from '../contracts/upstream.js';
import type { RequestContext } from '../contracts/request-context.js';

/** Stateless results that carry cache hints, and which TTL applies to each. */
const CACHEABLE: ReadonlyMap<string, 'list' | 'read'> = new Map([
  ['server/discover', 'list'],
  ...[...LIST_METHODS.keys()].map((method): [string, 'list'] => [method, 'list']),
  ['resources/read', 'read'],
  // SEP-2640's: as lists, the upstreams' own hints (gateway/skills.ts merges them into the result) bounded here.
  [SKILLS_LIST, 'list'],
  [SKILLS_GET, 'list'],
  [DIRECTORY_READ, 'list'],
]);

export interface StatelessResultOptions {
  serverInfo: { name: string; version: string };
  /** Cache hints on stateless (2026-07-28) results. */
  caching: { listTtlMs: number; readTtlMs: number };
  /** What the 2026-07-28 upstreams said of their part of a list: merged into the gateway's hints. */
  upstreamHints?: (method: string) => CacheHints | undefined;
}

/**
 * Results as 2026-07-28 has them: `resultType`, the server's identity in `_meta`, and cache
 * hints on discover, lists and reads (public while every client sees the same catalog,
 * private once the tool list depends on the token's scopes; a read is the upstream's data,
 * so private).
 */
export class StatelessResults {
  constructor(private readonly options: StatelessResultOptions) {}

  shape(ctx: RequestContext, method: string, result: McpResult): McpResult {
    const { serverInfo, caching } = this.options;
    const meta = isObject(result._meta)
      ? { ...result._meta, [META.serverInfo]: serverInfo }
      : { [META.serverInfo]: serverInfo };
    const shaped: McpResult = { resultType: 'complete', ...result, _meta: meta };
    // An input-required result is the middle of a request, never to be cached.
    const cacheable = result.resultType === 'input_required' ? undefined : CACHEABLE.get(method);
    if (cacheable === 'list') {
      // The smallest ttl of the parts wins, and one private part makes the whole private.
      const parts = ownHints(result) ?? this.options.upstreamHints?.(method);
      const ttlMs = parts?.ttlMs !== undefined ? Math.min(caching.listTtlMs, parts.ttlMs) : caching.listTtlMs;
      Object.assign(shaped, {
        ttlMs,
        cacheScope: ctx.mayCall || parts?.cacheScope === 'private' ? 'private' : 'public',
      });
    } else if (cacheable === 'read') {
      // A 2026-07-28 upstream says how fresh its resource is; of another the gateway cannot know.
      Object.assign(shaped, {
        ttlMs: typeof result.ttlMs === 'number' && result.ttlMs >= 0 ? result.ttlMs : caching.readTtlMs,
        cacheScope: 'private',
      });
    }
    return shaped;
  }
}

/** Hints a result carries itself (the skills methods'); the four lists' come from the upstreams' workers. */
function ownHints(result: McpResult): CacheHints | undefined {
  const ttlMs = typeof result.ttlMs === 'number' && result.ttlMs >= 0 ? result.ttlMs : undefined;
  const cacheScope = result.cacheScope === 'private' || result.cacheScope === 'public' ? result.cacheScope : undefined;
  if (ttlMs === undefined && cacheScope === undefined) return undefined;
  return { ...(ttlMs === undefined ? {} : { ttlMs }), ...(cacheScope === undefined ? {} : { cacheScope }) };
}

/**
 * A stateless request's params as a 2025 upstream may see them: without the `_meta` fields that
 * describe the client's request to the gateway (its version, capabilities, identity) and
 * without input-required round trip fields, which the gateway never asked for.
 */
export function upstreamParams(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params) return params;
  // One pass over each object, no intermediate arrays: this runs for every stateless call.
  const rest: Record<string, unknown> = {};
  let meta: unknown;
  for (const k in params) {
    if (!Object.hasOwn(params, k)) continue;
    if (k === '_meta') meta = params[k];
    else if (k !== 'inputResponses' && k !== 'requestState') defineKey(rest, k, params[k]);
  }
  if (!isObject(meta)) return rest;
  // Keys are the client's: on a plain object "__proto__" would set the prototype, not a key.
  let kept: Record<string, unknown> | undefined;
  for (const k in meta) {
    if (!Object.hasOwn(meta, k) || k.startsWith(RESERVED_META_PREFIX)) continue;
    kept ??= Object.create(null) as Record<string, unknown>;
    kept[k] = meta[k];
  }
  if (kept) rest._meta = kept;
  return rest;
}

/**
 * `target[key] = value` as an own data property, "__proto__" included (JSON.parse makes such keys; an assignment would
 * set the prototype).
 */
function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
