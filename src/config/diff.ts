/**
 * What a config reload changes: the pure comparison of the running config with a new one, which
 * the reloader applies. Nothing here starts or stops anything.
 *
 * The rules (README "Reload"):
 * - upstreams: each one added, removed, or changed. A change of what its workers are (command,
 *   args, env, url, headers, auth, transport, mode, pool...) replaces its workers; a change of
 *   only how the gateway uses them (POLICY_KEYS: prefix, tool filter, timeouts, argument
 *   checks, fairness, interceptors) keeps the workers and applies at once.
 * - LIVE_LIMITS and LIVE_SECTIONS apply at once (`toolSearch` to the next request: a search in
 *   flight ends under the config it began with); so do `tasks:` (limits, ttls, poll interval: read
 *   per call) and `upstreams[].tasks` (a policy key), where the gateway started with a task engine
 *   (some upstream named task tools at start; without one, they are restart-only: app.ts says so).
 * - everything else (listen address and port, server timeouts, path, TLS, sessions and their
 *   store, auth, security, SSE, resumability, pagination, shutdown, audit...) is bound when the
 *   process starts: a change there is named in a warning and left as it was until a restart.
 */
import type { GatewayConfig, UpstreamConfig } from './schema.js';

/** Keys of an upstream that change how the gateway uses its workers, not the workers themselves. */
export const POLICY_KEYS: ReadonlySet<string> = new Set([
  'prefix',
  'tools',
  'timeoutMs',
  'maxTimeoutMs',
  'validateArguments',
  'required',
  'tasks',
  'fairness',
  'pinning',
  'interceptors',
]);

/** Keys of `limits` that requests read as they come (the rest size what was built at start). */
export const LIVE_LIMITS: ReadonlySet<string> = new Set([
  'maxJsonDepth',
  'maxBatchSize',
  'maxInFlightPerClient',
  'maxStreams',
  'maxBodyBytesPerSecondPerClient',
]);

/**
 * Top-level sections applied at once besides `upstreams` and the live limits. `servers` (virtual
 * servers) is replaced whole by the reload's apply step.
 */
export const LIVE_SECTIONS: ReadonlySet<string> = new Set([
  'upstreams',
  'limits',
  'logLevel',
  'servers',
  'tasks',
  'rateLimits',
  'pinning',
  'quotas',
  'toolSearch',
  'authorization',
]);

export interface UpstreamChange {
  name: string;
  /** `workers`: its workers are replaced; `policy`: the same workers, used differently. */
  kind: 'workers' | 'policy';
  /** The keys that differ, for the log. */
  keys: string[];
}

export interface ConfigDiff {
  /** New upstreams, in the new config's order. */
  added: UpstreamConfig[];
  /** Names of upstreams that are gone. */
  removed: string[];
  changed: UpstreamChange[];
  /** Live `limits` keys whose value differs. */
  limits: string[];
  logLevel: boolean;
  /** Whether `servers` differs (virtual servers, replaced whole). */
  servers: boolean;
  /** Whether `rateLimits` differs (its rules replaced whole; the counters of rules kept by name stay). */
  rateLimits: boolean;
  /** Whether `quotas` differs (replaced whole; the counts of quotas kept by name and window stay). */
  quotas: boolean;
  /** Whether the main path's `toolSearch` differs (read per request: new requests see the new one). */
  toolSearch: boolean;
  /** Dotted `tasks.*` keys that differ (applied at once to new tasks; running ones keep theirs). */
  tasks: string[];
  /** Dotted keys that differ but apply only at a restart ("listen.port", "sessions"). */
  restartOnly: string[];
}

/** Whether a reload has anything to apply (restart-only keys apply nothing). */
export function hasLiveChanges(diff: ConfigDiff): boolean {
  return (
    diff.added.length + diff.removed.length + diff.changed.length + diff.limits.length + diff.tasks.length > 0 ||
    diff.logLevel ||
    diff.servers ||
    diff.rateLimits ||
    diff.quotas ||
    diff.toolSearch
  );
}

/** The difference between the running config and the one a reload loaded. */
export function diffConfigs(current: GatewayConfig, next: GatewayConfig): ConfigDiff {
  const cur = current as unknown as Record<string, unknown>;
  const nxt = next as unknown as Record<string, unknown>;
  const restartOnly: string[] = [];
  for (const key of new Set([...Object.keys(cur), ...Object.keys(nxt)])) {
    if (LIVE_SECTIONS.has(key)) continue;
    restartOnly.push(...differingKeys(key, cur[key], nxt[key]));
  }
  const limits: string[] = [];
  const curLimits = (current.limits ?? {}) as Record<string, unknown>;
  const nextLimits = (next.limits ?? {}) as Record<string, unknown>;
  for (const key of new Set([...Object.keys(curLimits), ...Object.keys(nextLimits)])) {
    if (same(curLimits[key], nextLimits[key])) continue;
    if (LIVE_LIMITS.has(key)) limits.push(key);
    else restartOnly.push(`limits.${key}`);
  }
  return {
    ...diffUpstreams(current.upstreams, next.upstreams),
    limits,
    logLevel: current.logLevel !== next.logLevel,
    servers: !same(cur.servers, nxt.servers),
    rateLimits: !same(cur.rateLimits, nxt.rateLimits),
    quotas: !same(cur.quotas, nxt.quotas),
    toolSearch: !same(cur.toolSearch, nxt.toolSearch),
    tasks: differingKeys('tasks', cur.tasks, nxt.tasks),
    restartOnly,
  };
}

function diffUpstreams(
  current: readonly UpstreamConfig[],
  next: readonly UpstreamConfig[],
): Pick<ConfigDiff, 'added' | 'removed' | 'changed'> {
  const before = new Map(current.map((u) => [u.name, u]));
  const after = new Set(next.map((u) => u.name));
  const added: UpstreamConfig[] = [];
  const changed: UpstreamChange[] = [];
  for (const u of next) {
    const old = before.get(u.name);
    if (!old) {
      added.push(u);
      continue;
    }
    const a = old as unknown as Record<string, unknown>;
    const b = u as unknown as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !same(a[k], b[k])).sort();
    if (keys.length === 0) continue;
    changed.push({ name: u.name, kind: keys.every((k) => POLICY_KEYS.has(k)) ? 'policy' : 'workers', keys });
  }
  const removed = current.filter((u) => !after.has(u.name)).map((u) => u.name);
  return { added, removed, changed };
}

/** The dotted keys under `prefix` whose values differ, as deep as both sides are mappings. */
function differingKeys(prefix: string, a: unknown, b: unknown): string[] {
  if (same(a, b)) return [];
  if (!isMapping(a) || !isMapping(b)) return [prefix];
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) =>
    differingKeys(`${prefix}.${k}`, a[k], b[k]),
  );
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of two loaded config values (JSON data: no functions, dates or cycles). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]));
  if (!isMapping(a) || !isMapping(b)) return false;
  const keys = Object.keys(a);
  // An absent key and one set to undefined are the same config.
  const defined = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined).length;
  return defined(a) === defined(b) && keys.every((k) => same(a[k], b[k]));
}
