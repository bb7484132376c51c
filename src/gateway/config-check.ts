// The whole check of a config, as --check runs it and as a reload must before it applies one:
// what the file says (loadConfig did that), whether each stdio command exists, and what only
// the upstreams can tell: their lists are fetched (the upstreams started, nothing served) to
// find name and URI collisions, overrides that fit no tool, and globs that select nothing.
import type { Logger } from 'pino';
import { missingCommands } from '../config/commands.js';
import type { GatewayConfig } from '../config/schema.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { LATEST_VERSION } from '../jsonrpc/versions.js';
import { DataPathEvents } from '../observability/events.js';
import type { UpstreamPeer } from '../contracts/upstream.js';
import { MemoryTokenStore } from '../session/memory-token-store.js';
import { TokenCipher } from '../session/token-store.js';
import { UpstreamGroup } from '../upstream/group.js';
import { CatalogCollisionError, LISTS, type ListKind } from './catalog.js';
import { sandboxProblems } from '../upstream/sandbox-probe.js';
import { CatalogManager } from './catalog-manager.js';
import { PROBE_CAPABILITIES } from './capability-catalogs.js';
import { ServerView, viewProblems } from './server-views.js';
import { rateLimitWarnings } from '../config/rate-limits.js';
import { quotaWarnings } from '../config/quotas.js';
import { policyProblems } from '../policy/policy-set.js';

export interface ConfigCheck {
  /** The config would be refused (at start-up, or by a reload). */
  errors: string[];
  /** Worth saying, but accepted: a glob that selects nothing, an upstream not reached. */
  warnings: string[];
  /** What was checked, as --check prints it: each upstream's lists, each server's selection. */
  checked: CheckedItems;
}

/** How many of each list an upstream offered, or a server selects. */
export type ListCounts = Record<ListKind, number>;

export interface CheckedItems {
  /** Per configured upstream: its transport and mode; its counts when it came up and listed them. */
  upstreams: Array<{ name: string; transport: string; mode: string; lists: ListCounts | undefined }>;
  /** Per virtual server (servers[]): what it selects of the catalog. */
  servers: Array<{ path: string; lists: ListCounts }>;
  /** The merged catalog (the main endpoint's lists). */
  catalog: ListCounts;
}

export interface ConfigCheckOptions {
  log: Logger;
  /** How long the upstreams have to come up and list what they offer. */
  deadlineMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** A peer that answers nobody: the check's upstreams serve no client. */
const NOBODY: UpstreamPeer = {
  request: async (method) => {
    throw new GatewayError('METHOD_NOT_FOUND', `${method}: no client during a config check`);
  },
  notification: () => undefined,
};

/**
 * The upstreams started only to list what they offer (--check, `mcpgw pin`): no client, no session store;
 * the caller closes `group` and `tokens`.
 */
export function listingParts(config: GatewayConfig, log: Logger) {
  // Upstreams that hold users' tokens (grant authorization-code) are built with a store, as the
  // gateway builds them; no user calls during a check, so this one stays empty and goes with it.
  const tokens = new MemoryTokenStore(new TokenCipher([]));
  const identity = {
    clientInfo: { name: 'mcp-gateway-check', version: '0' },
    capabilities: {},
    protocolVersion: LATEST_VERSION,
  };
  const group = new UpstreamGroup(config.upstreams, {
    identity,
    peers: { shared: () => NOBODY, perSession: () => NOBODY },
    logRepeatMs: config.logRepeatMs,
    log,
    diagnostics: new DataPathEvents('config-check'),
    tokens,
  });
  const catalogs = new CatalogManager({
    upstreams: group.upstreams,
    probeIdentity: { ...identity, capabilities: PROBE_CAPABILITIES },
    log,
  });
  return { group, catalogs, tokens };
}

/** Every check of a loaded config; the upstreams it starts are stopped before it returns. */
export async function checkConfig(config: GatewayConfig, options: ConfigCheckOptions): Promise<ConfigCheck> {
  const { log } = options;
  const errors = [
    ...missingCommands(config, options.env),
    ...(await sandboxProblems(config.upstreams)),
    ...policyProblems(config.authorization?.policyFile),
  ];
  const warnings: string[] = [];
  let checked: CheckedItems = { upstreams: [], servers: [], catalog: countsOf(() => 0) };
  const { group, catalogs, tokens } = listingParts(config, log);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), options.deadlineMs ?? 30_000);
  });
  try {
    const started = catalogs.start().then(() => 'done' as const);
    // Past the deadline it may still fail (a collision found late): nobody waits for it then.
    started.catch(() => undefined);
    const outcome = await Promise.race([started, deadline]);
    if (outcome === 'late')
      warnings.push(
        `the upstreams did not all list what they offer within ${(options.deadlineMs ?? 30_000) / 1000} s: ` +
          `collisions and servers were checked against those that did`,
      );
    const missing = [...group.upstreams.keys()].filter((name) => !catalogs.listed(name));
    for (const name of missing)
      warnings.push(
        `upstream "${name}" did not come up during the check: its names were not checked for collisions or overrides`,
      );
    const views = viewProblems(config.servers, catalogs.catalog, missing.length === 0);
    errors.push(...views.errors);
    warnings.push(...views.warnings);
    // Tools only when every upstream listed its own: else a glob may fit one that did not.
    const tools = missing.length === 0 ? catalogs.catalog.list('tools').map((t) => String(t.name)) : undefined;
    warnings.push(...rateLimitWarnings(config.rateLimits, [...group.upstreams.keys()], tools));
    warnings.push(...quotaWarnings(config.quotas, [...group.upstreams.keys()], tools));
    checked = checkedItems(config, catalogs);
  } catch (err) {
    if (!(err instanceof CatalogCollisionError)) throw err;
    errors.push(err.message);
  } finally {
    clearTimeout(timer);
    await group.close().catch(() => undefined);
    await tokens.close();
  }
  return { errors, warnings, checked };
}

const KINDS = Object.keys(LISTS) as ListKind[];

function countsOf(count: (kind: ListKind) => number): ListCounts {
  return Object.fromEntries(KINDS.map((kind) => [kind, count(kind)])) as ListCounts;
}

function checkedItems(config: GatewayConfig, catalogs: CatalogManager): CheckedItems {
  const catalog = catalogs.catalog;
  return {
    upstreams: config.upstreams.map((u) => {
      const lists = catalogs.listsOf(u.name)?.lists;
      return {
        name: u.name,
        transport: u.transport,
        mode: u.mode ?? 'shared',
        lists: lists && countsOf((kind) => lists[kind]?.length ?? 0),
      };
    }),
    servers: config.servers.map((s) => {
      const view = new ServerView(s);
      return { path: s.path, lists: countsOf((kind) => view.list(catalog, kind).length) };
    }),
    catalog: countsOf((kind) => catalog.list(kind).length),
  };
}

const NOUNS: Record<ListKind, [string, string]> = {
  tools: ['tool', 'tools'],
  prompts: ['prompt', 'prompts'],
  resources: ['resource', 'resources'],
  resourceTemplates: ['resource template', 'resource templates'],
};

function describeCounts(c: ListCounts): string {
  return KINDS.map((kind) => `${c[kind]} ${NOUNS[kind][c[kind] === 1 ? 0 : 1]}`).join(', ');
}

/** What --check prints under its verdict: one line per upstream and server, then the catalog and what was checked. */
export function describeChecked(checked: CheckedItems): string[] {
  const lines = checked.upstreams.map(
    (u) =>
      `upstream ${u.name} (${u.transport}, ${u.mode}): ${
        u.lists ? describeCounts(u.lists) : 'did not come up: not listed'
      }`,
  );
  for (const s of checked.servers) lines.push(`server ${s.path}: ${describeCounts(s.lists)}`);
  lines.push(`catalog: ${describeCounts(checked.catalog)}`);
  lines.push(
    'checked: schema and cross-checks, ${VAR}s, readable files, stdio commands on PATH, name and URI collisions, ' +
      "servers' overrides and globs",
  );
  return lines;
}
