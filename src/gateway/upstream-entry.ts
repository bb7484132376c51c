// One configured upstream as the virtual server's parts see it, whichever its sharing mode.
import { isObject } from '../jsonrpc/messages.js';
import type { CacheHints, UpstreamServerInfo } from '../contracts/upstream.js';
import type { UpstreamEntry } from '../upstream/group.js';

export type { UpstreamEntry };

/** What the upstream said at initialize; undefined while it is not up. */
export function upstreamInfo(entry: UpstreamEntry): UpstreamServerInfo | undefined {
  return entry.workers.info;
}

/** Whether the upstream lets clients subscribe to its resources. */
export function offersSubscriptions(info: UpstreamServerInfo | undefined): boolean {
  const resources = info?.capabilities.resources;
  return isObject(resources) && resources.subscribe === true;
}

/** The caching hints of the upstreams' answers to a list method, merged: the smallest ttl, private if any is. */
export function mergedHints(upstreams: ReadonlyMap<string, UpstreamEntry>, method: string): CacheHints | undefined {
  let merged: CacheHints | undefined;
  for (const entry of upstreams.values()) {
    const h = entry.workers.hints?.(method);
    if (!h) continue;
    merged ??= {};
    if (h.ttlMs !== undefined) merged.ttlMs = Math.min(merged.ttlMs ?? h.ttlMs, h.ttlMs);
    if (h.cacheScope === 'private') merged.cacheScope = 'private';
  }
  return merged;
}
