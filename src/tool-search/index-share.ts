// A built index kept for the gateway's other processes. Building is the costly part of a large
// index (50,000 tools: about a second of CPU); loading one built elsewhere, through Redis, costs
// about a third of that (load/tool-search/share-cost.mjs). With sessions in Redis, the first
// process to build an endpoint's index of a catalog version keeps it there
// (redis-index-share.ts), and the other replicas, and this one after a restart, load it instead.
// Only lists ranked on the search thread are shared: a smaller one builds in less time than the
// round trip takes.
import { createHash } from 'node:crypto';
import type { SearchableTool } from './ranker.js';

/** Where built indexes are kept, by key. */
export interface IndexShare {
  /** The index kept under `key`; undefined when there is none or the store cannot say (the caller builds). */
  get(key: string): Promise<string | undefined>;
  /** Keeps `text` under `key`, unless an index is kept there already. Never rejects. */
  put(key: string, text: string): Promise<void>;
}

/**
 * The key of the index of `tools` made under `format` (what decides the terms and the ranking):
 * a hash of exactly what is indexed, so a different list, ranking or term table is a different
 * key, never a stale index. Hashed `chunk` tools per event-loop turn, as the build itself goes.
 */
export async function indexKey(format: string, tools: readonly SearchableTool[], chunk: number): Promise<string> {
  const hash = createHash('sha256').update(format).update('\n');
  for (let from = 0; from < tools.length; from += chunk) {
    if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (const tool of tools.slice(from, from + chunk)) hash.update(JSON.stringify(tool)).update('\n');
  }
  return hash.digest('base64url');
}
