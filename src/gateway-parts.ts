// The virtual server over every configured upstream, the per-session router beside it, the
// rate limits and quotas, and the task engine's settings, built (nothing started) for
// createGateway (app.ts).
import { GATEWAY_VERSION } from './version.js';
import type { GatewayConfig } from './config/schema.js';
import type { ConfigDiff } from './config/diff.js';
import { LiveTaskSettings, namesTaskTools } from './config/tasks.js';
import type { createReplication } from './cluster/replication.js';
import type { TaskStore } from './contracts/task-store.js';
import type { ClientIdentity } from './contracts/upstream.js';
import { PROBE_CAPABILITIES } from './gateway/capability-catalogs.js';
import { PerSessionRouter } from './gateway/per-session-router.js';
import { PinPolicy, pinReporter, pinSettings } from './gateway/pin-policy.js';
import { NotificationEvents } from './gateway/request-events.js';
import { ResourceUris } from './gateway/resource-uris.js';
import { TaskPassThrough } from './tasks/pass-through.js';
import { VirtualServer } from './gateway/virtual-server.js';
import type { DataPathEvents } from './observability/events.js';
import type { Logger } from './observability/logger.js';
import type { SessionStore } from './session/session-store.js';
import { upstreamSessionMemory } from './session/upstream-session-memory.js';
import type { SideStores } from './stores.js';
import { liveLimits } from './live-limits.js';
import { LivePolicy } from './policy/live-policy.js';
import { UpstreamGroup, type UpstreamPeers } from './upstream/group.js';
import { Guardrails } from './guardrails/chains.js';
import { resultCacheOf } from './upstream/result-cache.js';

/** The virtual server over every configured upstream, and the per-session router beside it (nothing started). */
export function createVirtualServer(
  config: GatewayConfig,
  identity: ClientIdentity,
  replication: Replication,
  store: SessionStore,
  log: Logger,
  diagnostics: DataPathEvents,
  side: SideStores,
) {
  const { spentStates, tokens, tasks } = side;
  // First: a policy file that does not parse or validate stops the start before any upstream is made.
  const policy = new LivePolicy(config);
  // The upstreams' peers call back into the server and router, which need the upstreams first.
  let server: VirtualServer | undefined;
  let router: PerSessionRouter | undefined;
  const peers: UpstreamPeers = {
    shared: (upstream) => server!.sharedPeer(upstream),
    perSession: (upstream, scope) => router!.peer(upstream, scope),
  };
  const group = new UpstreamGroup(config.upstreams, {
    identity,
    peers,
    memoryFor: (upstream, scope) => upstreamSessionMemory(store, upstream, scope, log),
    ...(tokens ? { tokens } : {}),
    logRepeatMs: config.logRepeatMs,
    log,
    diagnostics,
    resultCache: resultCacheOf(config, diagnostics),
  });
  const uris = new ResourceUris(group.upstreams);
  const notifications = new NotificationEvents(diagnostics, (u) => group.upstreams.get(u)?.networkTransport ?? 'pipe');
  const passThrough = new TaskPassThrough(group.upstreams, config.stateless.stateSecret);
  const settings = new LiveTaskSettings(config.tasks, config.upstreams);
  const pins = new PinPolicy(pinSettings(config), pinReporter(log, diagnostics, config.logRepeatMs));
  const toolSearch = liveToolSearch(config);
  // One set of chains for calls (the virtual server's) and asks (the router's), one connection per interceptor server.
  const guardrails = new Guardrails(config.interceptors, {
    diagnostics,
    log,
    upstreamList: (upstream) => group.upstreams.get(upstream)?.interceptors,
    // Read per message, as an ask runs (the virtual server is built below).
    endpointList: (path) => server?.endpointInterceptors(path),
  });
  router = new PerSessionRouter({
    upstreams: group.perSession(),
    bus: replication.bus,
    owners: replication.owners,
    log,
    onListChanged: (upstream, method, scope) => server?.listChanged(upstream, method, scope),
    exposeNotification: (upstream, n) => passThrough.rewrite(upstream, uris.notification(upstream, n)),
    notifications,
    inputWaitMs: config.stateless.inputTimeoutMs,
    workerStartsPerMinute: config.limits.workerStartsPerMinute,
    guardrails,
  });
  server = new VirtualServer({
    upstreams: group.upstreams,
    perSession: router,
    bus: replication.bus,
    // A probe of a per-session upstream offers every client capability, so no tool stays hidden.
    probeIdentity: { ...identity, capabilities: PROBE_CAPABILITIES },
    serverInfo: { name: 'mcp-gateway', version: GATEWAY_VERSION },
    pageSize: config.pagination.pageSize,
    caching: config.stateless,
    log,
    diagnostics,
    servers: config.servers,
    spentStates,
    ...(tasks ? { tasks: taskOptions(settings, tasks, replication, config, log) } : {}),
    passThrough,
    notifications,
    pins,
    toolSearch: toolSearch.current,
    ...(side.toolIndexes ? { indexShare: side.toolIndexes } : {}),
    guardrails,
    policy,
  });
  // Rate limits and quotas from the first request on: the chain is recomposed before anything is served.
  const limits = liveLimits(config, diagnostics, log, (a) => server!.setAdmissions(a));
  // A reload reads the lock and the policy file again (load: a malformed one rejects the reload), then applies them.
  const pinsReload = {
    load: (next: GatewayConfig) => {
      const read = pinSettings(next);
      const apply = policy.read(next);
      return () => {
        apply();
        return pins.set(read);
      };
    },
  };
  const liveParts = { liveTasks: liveTasks(settings, tasks !== undefined), pinsReload, toolSearchReload: toolSearch };
  return { server, router, group, limits, ...liveParts };
}

/**
 * The main path's `toolSearch`, which the tool search step reads per request: a reload replaces
 * it (on, off, pinned, maxResults, expose), every session hearing tools/list_changed. The path
 * itself is restart-only.
 */
function liveToolSearch(config: GatewayConfig) {
  const current = { config: config.toolSearch, path: config.path };
  return {
    current,
    apply: (next: GatewayConfig, diff: ConfigDiff): string[] => {
      if (!diff.toolSearch) return [];
      current.config = next.toolSearch;
      return ['notifications/tools/list_changed'];
    },
  };
}

export type Replication = ReturnType<typeof createReplication>;

/**
 * Tasks as `upstreams[].tasks` and `tasks:` say (live: a reload changes them in place); a dead runner is known by its
 * heartbeat in the owner registry.
 */
function taskOptions(
  settings: LiveTaskSettings,
  store: TaskStore,
  replication: Replication,
  config: GatewayConfig,
  log: Logger,
) {
  const { owners } = replication;
  return {
    store,
    replicaId: owners.replicaId,
    bus: replication.bus,
    isAlive: (id: string) => owners.isAlive(id),
    limits: settings.limits,
    support: (upstream: string, tool: string) => settings.support(upstream, tool),
    pageSize: config.pagination.pageSize,
    log,
  };
}

/**
 * What a reload changes of tasks: `tasks:` and `upstreams[].tasks` at once where a task engine
 * runs; without one (no upstream named task tools at start) they wait for a restart.
 */
function liveTasks(settings: LiveTaskSettings, engine: boolean) {
  return {
    restartOnly: (next: GatewayConfig, diff: ConfigDiff): string[] => {
      if (engine) return [];
      const keys = namesTaskTools(next.upstreams)
        ? ['upstreams[].tasks (no task engine: no upstream named task tools at start)']
        : [];
      return [...keys, ...diff.tasks];
    },
    apply: (next: GatewayConfig): string[] =>
      engine && settings.apply(next.tasks, next.upstreams) ? ['notifications/tools/list_changed'] : [],
  };
}
