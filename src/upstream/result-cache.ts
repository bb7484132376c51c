// What 2026-07-28 upstreams said may be kept (SEP-2549's `ttlMs` and `cacheScope`): their lists
// and resources/read results, in this replica's memory, least recently used out first once
// `maxBytes` is reached. (server/discover is not kept here: the gateway answers clients' itself,
// and its own is the StatelessSet's, refreshed once per ttlMs, bounded by the same maxTtlMs.) A
// result says for how long (bounded by `maxTtlMs`) and for whom: `public` is shared by every
// caller, `private` (or no scope said) is kept per principal and only with one (auth on). A list
// change or resource update of the upstream drops its entries at once, before the catalog asks
// again. A 2025 upstream gives no hints: its set has no cache.
import { isObject, type JsonRpcNotification } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import type { McpResult } from '../contracts/upstream.js';
import type { DataPathEvents } from '../observability/events.js';
import type { CacheConfig } from '../config/cache.js';

/** The methods whose results may be kept, by what drops them. */
const DROPPED_BY: ReadonlyMap<string, string> = new Map([
  ['tools/list', 'notifications/tools/list_changed'],
  ['prompts/list', 'notifications/prompts/list_changed'],
  ['resources/list', 'notifications/resources/list_changed'],
  ['resources/templates/list', 'notifications/resources/list_changed'],
  ['resources/read', 'notifications/resources/updated'],
]);

export interface ResultCacheOptions {
  /** All entries together, as their JSON's length, at most. */
  maxBytes: number;
  /** The longest an entry is kept, whatever its ttlMs says. */
  maxTtlMs: number;
  diagnostics?: DataPathEvents | undefined;
}

interface Entry {
  owner: string;
  method: string;
  uri: string | undefined;
  /** The result as JSON: each hit parses a copy of its own (callers may change it); its length is its size. */
  json: string;
  expires: number;
}

/** Whether a result of `method` may be kept at all (the method is one of those above). */
export function isCacheable(method: string): boolean {
  return DROPPED_BY.has(method);
}

/** How long `result` may be kept, bounded; 0: not at all (no ttlMs, not a number, negative, 0). */
export function keepFor(result: McpResult, maxTtlMs: number): number {
  const ttl = result.ttlMs;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0) return 0;
  return Math.min(ttl, maxTtlMs);
}

/**
 * What a request's answer depends on besides its method: its params without `_meta`, and of the
 * `_meta` the client's capabilities (an upstream may list by them), not its clientInfo or ids.
 */
function requestKey(method: string, params: Record<string, unknown> | undefined): string {
  const { _meta: meta, ...rest } = params ?? {};
  const capabilities = isObject(meta) ? meta[META.clientCapabilities] : undefined;
  return `${method}\n${JSON.stringify(rest)}\n${JSON.stringify(capabilities ?? null)}`;
}

/** The upstream's name in an owner id (see ResultCache.owner), for the metrics' label. */
function nameOf(owner: string): string {
  const at = owner.lastIndexOf('#');
  return at === -1 ? owner : owner.slice(0, at);
}

/**
 * Every method takes an `owner`: one set of an upstream's (ResultCache.owner), not its name, so a
 * reload that replaces the upstream (another URL, say) starts with nothing of the old one's.
 */
export class ResultCache {
  /** In use order: the first is the least recently used. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  #owners = 0;

  constructor(private readonly options: ResultCacheOptions) {}

  /** The longest a result is kept (`cache.maxTtlMs`). */
  get maxTtlMs(): number {
    return this.options.maxTtlMs;
  }

  /** Bytes held now (all entries). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** A new owner id for a set of `upstream`'s. */
  owner(upstream: string): string {
    return `${upstream}#${++this.#owners}`;
  }

  /** The kept result of this request for `principal` (a public one first), or undefined (a miss, counted). */
  get(
    owner: string,
    method: string,
    params: Record<string, unknown> | undefined,
    principal: string | undefined,
  ): McpResult | undefined {
    const key = requestKey(method, params);
    const found =
      this.#live(`${owner}\npublic\n${key}`) ??
      (principal === undefined ? undefined : this.#live(`${owner}\nprivate:${principal}\n${key}`));
    const outcome = found ? 'hit' : 'miss';
    this.options.diagnostics?.emit('cache:lookup', { upstream: nameOf(owner), method, outcome });
    if (!found) return undefined;
    // What is left of its ttl: the gateway's own answer merges it (and a client may keep it as long).
    return { ...(JSON.parse(found.json) as McpResult), ttlMs: Math.max(1, found.expires - Date.now()) };
  }

  /** Keeps `result` as its hints allow (nothing when they do not, or it is larger than the whole cache). */
  set(
    owner: string,
    method: string,
    params: Record<string, unknown> | undefined,
    principal: string | undefined,
    result: McpResult,
  ): void {
    const ttl = keepFor(result, this.options.maxTtlMs);
    if (ttl === 0 || (result.resultType !== undefined && result.resultType !== 'complete')) return;
    // No scope said is taken as private: shared only when the upstream says so.
    const shared = result.cacheScope === 'public';
    if (!shared && principal === undefined) return;
    const json = JSON.stringify(result);
    if (json.length > this.options.maxBytes) return;
    const key = `${owner}\n${shared ? 'public' : `private:${principal}`}\n${requestKey(method, params)}`;
    this.#delete(key);
    const uri = typeof params?.uri === 'string' ? params.uri : undefined;
    this.#entries.set(key, { owner, method, uri, json, expires: Date.now() + ttl });
    this.#bytes += json.length;
    for (const [oldest, e] of this.#entries) {
      if (this.#bytes <= this.options.maxBytes) break;
      this.#delete(oldest);
      this.options.diagnostics?.emit('cache:eviction', { upstream: nameOf(e.owner) });
    }
  }

  /** Its upstream's notification: a list change drops its entries of that list, an update those of that URI. */
  notified(owner: string, notification: JsonRpcNotification): void {
    const uri = notification.params?.uri;
    for (const [key, e] of this.#entries) {
      if (e.owner !== owner || DROPPED_BY.get(e.method) !== notification.method) continue;
      if (notification.method === 'notifications/resources/updated' && e.uri !== uri) continue;
      this.#delete(key);
    }
  }

  /** Every entry of `owner` (its set closed: a reload replaced it, or the gateway stops). */
  drop(owner: string): void {
    for (const [key, e] of this.#entries) if (e.owner === owner) this.#delete(key);
  }

  #live(key: string): Entry | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    this.#entries.delete(key);
    if (e.expires <= Date.now()) {
      this.#bytes -= e.json.length;
      return undefined;
    }
    // Used now: to the end of the use order.
    this.#entries.set(key, e);
    return e;
  }

  #delete(key: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    this.#entries.delete(key);
    this.#bytes -= e.json.length;
  }
}

/** The replica's cache as `cache:` configures it (none when off or of no size). */
export function resultCacheOf(
  config: { cache: CacheConfig },
  diagnostics: DataPathEvents | undefined,
): ResultCache | undefined {
  const { enabled = true, maxBytes = 0, maxTtlMs = 0 } = config.cache;
  if (!enabled || maxBytes === 0 || maxTtlMs === 0) return undefined;
  return new ResultCache({ maxBytes, maxTtlMs, diagnostics });
}
