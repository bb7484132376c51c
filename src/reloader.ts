/**
 * Live config reload (SIGHUP, or a change of the config file: see config/watch.ts). A reload
 * loads and checks the file exactly as start-up does (config/load.ts) before it touches
 * anything; an invalid file changes nothing. A valid one is compared with what runs
 * (config/diff.ts) and its difference applied: upstreams staged (new workers start, the catalog
 * they give is built and checked for collisions), then put in place at once (calls from then on
 * use them; calls in flight finish where they started), limits and log level set, and every
 * session told what changed, through the same list_changed fan-out an upstream's own list change
 * uses (GET streams of 2025 sessions, listen streams of 2026-07-28 clients). Each replica reloads
 * its own file, so each tells the streams it holds. Keys that apply only at a restart are named
 * in a warning and keep their running value.
 */
import { ConfigError, loadConfig } from './config/load.js';
import { diffConfigs, hasLiveChanges, LIVE_LIMITS, LIVE_SECTIONS, type ConfigDiff } from './config/diff.js';
import type { GatewayConfig, UpstreamConfig } from './config/schema.js';
import type { DataPathEvents } from './observability/events.js';
import type { Logger } from './observability/logger.js';
import type { VirtualServer } from './gateway/virtual-server.js';
import type { UpstreamGroup } from './upstream/group.js';
import { sandboxProblems } from './upstream/sandbox-probe.js';

export type ReloadTrigger = 'signal' | 'file' | 'api';

/** What /status shows of reloads. */
export interface ReloadStatus {
  /** When the running config was loaded (start-up, or the last reload applied), ISO 8601. */
  loadedAt: string;
  /** The config file; undefined: the embedded default. */
  file: string | undefined;
  /** Reloads tried since start, applied or rejected. */
  count: number;
  lastOutcome: 'ok' | 'rejected' | undefined;
  /** Why the last rejected reload was rejected (cleared by one applied). */
  lastError: string | undefined;
}

export interface ReloadResult {
  outcome: 'ok' | 'rejected';
  /** The rejection's reason. */
  error?: string;
  diff?: ConfigDiff;
  /** The list_changed notifications sent. */
  notified: readonly string[];
}

/** The live parts a reload changes. */
export interface ReloadTargets {
  group: UpstreamGroup;
  server: VirtualServer;
  /** The transport's bounds read per request (limits.maxJsonDepth, maxBatchSize), changed in place. */
  intake: { maxDepth: number; maxBatch: number };
  /** limits.maxInFlightPerClient and maxStreams. */
  setTransportLimits(limits: {
    maxInFlightPerClient: number;
    maxStreams: number;
    maxBodyBytesPerSecondPerClient: number;
  }): void;
  /** Upstreams /readyz waits for (`upstreams[].required`), changed in place. */
  required: Set<string>;
  /**
   * Applied after the upstreams, with the new config (virtual servers, `servers:`): returns the
   * list_changed methods it caused, which are then sent to every session unless the catalog's
   * change sent them already. A throw rejects nothing any more (the upstreams are in place): it
   * is logged.
   */
  applySections?: (next: GatewayConfig, diff: ConfigDiff) => readonly string[];
  /**
   * Keys of `next` that differ from what runs and apply only at a restart, beyond what the config alone tells
   * (config/diff.ts).
   */
  restartOnly?: (next: GatewayConfig, diff: ConfigDiff) => readonly string[];
  /** Sends a list_changed to every session's stream on this replica (the catalog's own fan-out). */
  announce?: (method: string) => void;
  /**
   * Reads the pin lock and the policy file `next` names (a malformed one throws: the reload is rejected, the running
   * ones stay); the result applies them.
   */
  pins?: { load(next: GatewayConfig): () => readonly string[] };
  /** Whether a token store was made at start: without one, an upstream that holds users' tokens waits for a restart. */
  holdsTokens?: boolean;
}

export interface ReloaderOptions {
  file: string | undefined;
  config: GatewayConfig;
  targets: ReloadTargets;
  log: Logger;
  diagnostics: DataPathEvents;
  /** Where `${VAR}`s and MCPGW_* overrides come from (the process's environment). */
  env?: NodeJS.ProcessEnv;
}

export class Reloader {
  #config: GatewayConfig;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #status: ReloadStatus;

  constructor(private readonly options: ReloaderOptions) {
    this.#config = options.config;
    this.#status = {
      loadedAt: new Date().toISOString(),
      file: options.file,
      count: 0,
      lastOutcome: undefined,
      lastError: undefined,
    };
  }

  /** The config that runs: restart-only keys keep their start-up values. */
  get config(): GatewayConfig {
    return this.#config;
  }

  get status(): ReloadStatus {
    return { ...this.#status };
  }

  /** Reloads the file; reloads never overlap (a second waits for the first). */
  reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const run = this.#queue.then(() =>
      this.#closed
        ? { outcome: 'rejected' as const, error: 'the gateway is shutting down', notified: [] }
        : this.#reload(trigger),
    );
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Shutdown began: reloads from now on change nothing. */
  close(): void {
    this.#closed = true;
  }

  async #reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const { log, file } = this.options;
    this.#status.count++;
    let next: GatewayConfig;
    try {
      next = loadConfig(file, this.options.env ?? process.env);
    } catch (err) {
      const problems = err instanceof ConfigError ? err.problems : [err instanceof Error ? err.message : String(err)];
      return this.#rejected(trigger, problems.join('; '), { problems });
    }
    const diff = diffConfigs(this.#config, next);
    diff.restartOnly.push(...(this.options.targets.restartOnly?.(next, diff) ?? []));
    const needStore = this.options.targets.holdsTokens === false ? upstreamsNeedingTokens(diff, next) : [];
    if (needStore.length > 0) {
      const problems = needStore.map(
        (n) =>
          `upstreams.${n}.oauth.grant: holds tokens for users, and no token store was made at start ` +
          `(sessions.store redis without secrets.keys): needs a restart`,
      );
      return this.#rejected(trigger, problems.join('; '), { problems });
    }
    // A sandboxed upstream added on a host that cannot run it would never start: refused, as at start-up.
    const unsandboxable = await sandboxProblems(next.upstreams);
    if (unsandboxable.length > 0) return this.#rejected(trigger, unsandboxable.join('; '), { problems: unsandboxable });
    let repin: (() => readonly string[]) | undefined;
    try {
      repin = this.options.targets.pins?.load(next);
    } catch (err) {
      return this.#rejected(trigger, err instanceof Error ? err.message : String(err), {});
    }
    if (diff.restartOnly.length > 0) {
      log.warn(
        { trigger, file, keys: diff.restartOnly },
        `reload: ${diff.restartOnly.join(', ')} can change only at a restart; left as they were`,
      );
    }
    if (!hasLiveChanges(diff)) {
      this.#config = effectiveConfig(this.#config, next);
      // The same config may come with a new lock (mcpgw pin, then SIGHUP): the catalog is judged again.
      return this.#applied(trigger, diff, [...(repin?.() ?? [])]);
    }
    const { group, server } = this.options.targets;
    const staged = group.stage(diff, next.upstreams);
    let catalog;
    try {
      catalog = await server.stageCatalog(staged.entries, staged.removed);
    } catch (err) {
      await group.discard(staged);
      return this.#rejected(trigger, err instanceof Error ? err.message : String(err), {});
    }
    // The virtual servers are checked against the catalog the reload gives, before anything changes.
    const serverErrors = server.serverProblems(next.servers, catalog.catalog);
    if (serverErrors.length > 0) {
      await group.discard(staged);
      return this.#rejected(trigger, serverErrors.join('; '), { problems: serverErrors });
    }
    if (this.#closed) {
      // Shutdown began while the new workers started: they stop, not join.
      await group.discard(staged);
      return { outcome: 'rejected', error: 'the gateway is shutting down', notified: [] };
    }
    // From here on nothing fails: the new upstreams serve, the replaced ones drain.
    group.commit(staged);
    catalog.apply();
    // Sent already by the catalog: recorded so the sections' step does not send them again.
    const notified = new Set([...catalog.methods, ...(repin?.() ?? [])]);
    this.#applyLive(next, diff, notified);
    this.#config = effectiveConfig(this.#config, next);
    return this.#applied(trigger, diff, [...notified]);
  }

  #applyLive(next: GatewayConfig, diff: ConfigDiff, notified: Set<string>): void {
    const { targets, log } = this.options;
    targets.intake.maxDepth = next.limits.maxJsonDepth;
    targets.intake.maxBatch = next.limits.maxBatchSize;
    targets.setTransportLimits({
      maxInFlightPerClient: next.limits.maxInFlightPerClient,
      maxStreams: next.limits.maxStreams,
      maxBodyBytesPerSecondPerClient: next.limits.maxBodyBytesPerSecondPerClient,
    });
    targets.required.clear();
    for (const u of next.upstreams) if (u.required) targets.required.add(u.name);
    if (diff.logLevel) log.level = next.logLevel;
    if (!targets.applySections) return;
    try {
      for (const m of targets.applySections(next, diff)) {
        if (notified.has(m)) continue;
        notified.add(m);
        targets.announce?.(m);
      }
    } catch (err) {
      log.error(
        { err: err instanceof Error ? err.message : String(err) },
        'reload: applying the servers section failed',
      );
    }
  }

  #applied(trigger: ReloadTrigger, diff: ConfigDiff, notified: readonly string[]): ReloadResult {
    this.#status.loadedAt = new Date().toISOString();
    this.#status.lastOutcome = 'ok';
    this.#status.lastError = undefined;
    this.options.diagnostics.emit('config:reload', { outcome: 'ok' });
    this.options.log.info(
      {
        trigger,
        file: this.options.file,
        added: diff.added.map((u) => u.name),
        removed: diff.removed,
        changed: diff.changed.map((c) => `${c.name} (${c.kind}: ${c.keys.join(', ')})`),
        limits: diff.limits,
        notified,
      },
      hasLiveChanges(diff) ? 'config reloaded' : 'config reloaded: nothing to change',
    );
    return { outcome: 'ok', diff, notified };
  }

  #rejected(trigger: ReloadTrigger, error: string, detail: Record<string, unknown>): ReloadResult {
    this.#status.lastOutcome = 'rejected';
    this.#status.lastError = error;
    this.options.diagnostics.emit('config:reload', { outcome: 'rejected' });
    this.options.log.error(
      { trigger, file: this.options.file, err: error, ...detail },
      'config reload rejected: the running config stays',
    );
    return { outcome: 'rejected', error, notified: [] };
  }
}

/** What runs after a reload: the new config, but restart-only keys as they were. */
function effectiveConfig(current: GatewayConfig, next: GatewayConfig): GatewayConfig {
  const cur = current as unknown as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...(next as unknown as Record<string, unknown>) };
  for (const key of new Set([...Object.keys(cur), ...Object.keys(merged)])) {
    if (LIVE_SECTIONS.has(key)) continue;
    if (key in cur) merged[key] = cur[key];
    else delete merged[key];
  }
  const limits: Record<string, unknown> = { ...(current.limits as Record<string, unknown>) };
  for (const key of LIVE_LIMITS) limits[key] = (next.limits as Record<string, unknown>)[key];
  merged.limits = limits;
  return merged as unknown as GatewayConfig;
}

/** Upstreams the reload adds or replaces that keep tokens for users (token-exchange, authorization-code). */
function upstreamsNeedingTokens(diff: ConfigDiff, next: GatewayConfig): string[] {
  const touched = new Set([
    ...diff.added.map((u) => u.name),
    ...diff.changed.filter((c) => c.kind === 'workers').map((c) => c.name),
  ]);
  const holds = (u: UpstreamConfig) =>
    u.transport !== 'stdio' && (u.oauth?.grant === 'token-exchange' || u.oauth?.grant === 'authorization-code');
  return next.upstreams.filter((u) => touched.has(u.name) && holds(u)).map((u) => u.name);
}
