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
import { CatalogCollisionError } from './catalog.js';
import { CatalogManager } from './catalog-manager.js';
import { PROBE_CAPABILITIES } from './capability-catalogs.js';
import { viewProblems } from './server-views.js';

export interface ConfigCheck {
  /** The config would be refused (at start-up, or by a reload). */
  errors: string[];
  /** Worth saying, but accepted: a glob that selects nothing, an upstream not reached. */
  warnings: string[];
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

/** Every check of a loaded config; the upstreams it starts are stopped before it returns. */
export async function checkConfig(config: GatewayConfig, options: ConfigCheckOptions): Promise<ConfigCheck> {
  const { log } = options;
  const errors = missingCommands(config, options.env);
  const warnings: string[] = [];
  // Upstreams that hold users' tokens (grant authorization-code) are built with a store, as the
  // gateway builds them; no user calls during a check, so this one stays empty and goes with it.
  const tokens = new MemoryTokenStore(new TokenCipher([]));
  const identity = { clientInfo: { name: 'mcp-gateway-check', version: '0' }, capabilities: {}, protocolVersion: LATEST_VERSION };
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
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), options.deadlineMs ?? 30_000);
  });
  try {
    const started = catalogs.start().then(() => 'done' as const);
    // Past the deadline it may still fail (a collision found late): nobody waits for it then.
    started.catch(() => undefined);
    const outcome = await Promise.race([started, deadline]);
    if (outcome === 'late') warnings.push(`the upstreams did not all list what they offer within ${(options.deadlineMs ?? 30_000) / 1000} s: collisions and servers were checked against those that did`);
    const missing = [...group.upstreams.keys()].filter((name) => !catalogs.listed(name));
    for (const name of missing) warnings.push(`upstream "${name}" did not come up during the check: its names were not checked for collisions or overrides`);
    const views = viewProblems(config.servers, catalogs.catalog, missing.length === 0);
    errors.push(...views.errors);
    warnings.push(...views.warnings);
  } catch (err) {
    if (!(err instanceof CatalogCollisionError)) throw err;
    errors.push(err.message);
  } finally {
    clearTimeout(timer);
    await group.close().catch(() => undefined);
    await tokens.close();
  }
  return { errors, warnings };
}
