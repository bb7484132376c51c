import type { Logger } from 'pino';
import type { UpstreamConfig } from '../config/schema.js';
import { toolFilter } from '../config/tool-filter.js';
import { speaksModern } from '../config/upstream-common.js';
import { EraSet } from './era-set.js';
import { ModernProbe, ModernSet } from './modern-set.js';
import { LogThrottle } from '../observability/log-throttle.js';
import type { DataPathEvents } from '../observability/events.js';
import type { Deadline } from './deadline-timer.js';
import { UpstreamPool } from './pool.js';
import { createRemoteUpstream, type RemoteUpstream } from './remote.js';
import { SessionWorkers, type WorkerFactory } from './session-workers.js';
import type { PoolStatus, WorkerSet } from './worker-set.js';
import { StdioUpstream } from './wires/stdio.js';
import type { ClientIdentity, Upstream, UpstreamPeer, UpstreamSessionMemory } from '../contracts/upstream.js';
import type { TokenStore } from '../contracts/token-store.js';

/** Where the requests and notifications an upstream sends its client go: the gateway's side of each worker. */
export interface UpstreamPeers {
  /** For every shared worker of `upstream` (it serves no client in particular). */
  shared(upstream: string): UpstreamPeer;
  /** For the worker of one scope (client session). */
  perSession(upstream: string, scope: string): UpstreamPeer;
}

export interface UpstreamGroupOptions {
  /** How the gateway introduces itself where it initializes for no client: shared workers, health probes. */
  identity: ClientIdentity;
  peers: UpstreamPeers;
  /** Where a per-session worker of a remote upstream remembers its upstream session, so it can move between replicas. */
  memoryFor?: (upstream: string, scope: string) => UpstreamSessionMemory;
  /** Where remote upstreams that exchange tokens hold each user's (sealed). */
  tokens?: TokenStore;
  /** The pace of each upstream's repeated log lines, whichever of its workers has them. */
  logRepeatMs: number;
  log: Logger;
  diagnostics: DataPathEvents;
}

interface EntryCommon {
  /** What its tools, prompts and resources are namespaced with in the catalog. */
  prefix: string;
  /** Each call's idle timeout and hard ceiling (`timeoutMs`, `maxTimeoutMs`). */
  deadline: Deadline;
  /** Which of its tools (by their own names) the gateway offers; the rest do not exist for clients. */
  offersTool?: (name: string) => boolean;
  /** Whether tools/call arguments are checked against the tool's inputSchema (`upstreams[].validateArguments`). */
  validateArguments: boolean;
  /** `resources: { uris: prefixed }`: its resource URIs and templates are offered as `<prefix>+<uri>`. */
  prefixUris?: boolean;
  /** Its workers, whatever its mode: what the gateway calls. */
  workers: WorkerSet;
  /** OTel's network.transport of its calls: `pipe` (stdio) or `tcp` (remote). */
  networkTransport: 'pipe' | 'tcp';
}

/** One configured upstream as the gateway uses it: its workers serve it whatever its sharing mode. */
export type ConfiguredUpstream = EntryCommon;

/** A per-session upstream as the per-session router needs it. */
export interface PerSessionSet {
  workers: WorkerSet;
  /** Hard ceiling of one call, and how long the client may take to answer a request. */
  maxTimeoutMs: number;
}

/**
 * The upstreams built from the config (`upstreams[]`): per upstream its workers (child
 * processes, or sessions with a remote server; shared or per session) and, for a remote one,
 * its endpoint and health monitor. It answers for all of them: their status, their health,
 * and their shutdown. Nothing is started here (the gateway's catalog load starts the workers).
 */
export class UpstreamGroup {
  /** Every configured upstream by name, in config order. */
  readonly upstreams = new Map<string, ConfiguredUpstream>();
  readonly #remotes = new Map<string, RemoteUpstream>();

  constructor(
    configs: readonly UpstreamConfig[],
    private readonly options: UpstreamGroupOptions,
  ) {
    for (const u of configs) this.upstreams.set(u.name, this.#build(u));
  }

  /** The per-session upstreams, for the router that runs their calls on the owner replica. */
  perSession(): Map<string, PerSessionSet> {
    const sets = new Map<string, PerSessionSet>();
    for (const [name, u] of this.upstreams) if (u.workers.perScope) sets.set(name, { workers: u.workers, maxTimeoutMs: u.deadline.maxTimeoutMs });
    return sets;
  }

  /** Each upstream's workers, with a remote upstream's circuit: not ready while it is open. */
  status(): Record<string, PoolStatus> {
    const all: Record<string, PoolStatus> = {};
    for (const [name, u] of this.upstreams) {
      const status = u.workers.status();
      const health = this.#remotes.get(name)?.health;
      const info = u.workers.info;
      const withEra: PoolStatus = status.era || !info ? status : { ...status, era: 'session', protocolVersion: info.protocolVersion };
      all[name] = health ? { ...withEra, ...health.status(), state: !health.available && status.state !== 'closed' ? 'down' : status.state } : withEra;
    }
    return all;
  }

  /** Starts pinging the remote upstreams; `onChange` hears each one go down or come back. */
  watchHealth(onChange: (upstream: string, available: boolean) => void): void {
    for (const [name, remote] of this.#remotes) {
      remote.health.onChange((available) => onChange(name, available));
      remote.health.start();
    }
  }

  /** Stops every worker (those the gateway closed already stay closed), then the health probes and connections. */
  async close(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((u) => u.workers.close()));
    await Promise.all([...this.#remotes.values()].map((r) => r.close()));
  }

  #build(u: UpstreamConfig): ConfiguredUpstream {
    const { identity, peers, log } = this.options;
    const common = {
      prefix: u.prefix ?? u.name,
      deadline: { timeoutMs: u.timeoutMs, maxTimeoutMs: u.maxTimeoutMs },
      offersTool: toolFilter(u.tools),
      validateArguments: u.validateArguments,
      prefixUris: u.resources?.uris === 'prefixed',
      networkTransport: u.transport === 'stdio' ? ('pipe' as const) : ('tcp' as const),
    };
    // One per upstream: its repeated failures are logged at this pace, whichever worker has them.
    const throttle = new LogThrottle(this.options.logRepeatMs);
    // 2026-07-28 (pinned, or `auto` over http): stateless calls, and server/discover for health.
    const era = speaksModern(u);
    let modern: ModernSet | undefined;
    let eraSet: EraSet | undefined;
    const modernProbe = era === 'no' ? undefined : () => (eraSet?.era === 'session' ? undefined : new ModernProbe(modern!));
    const createWorker = this.#workerFactory(u, throttle, modernProbe);
    // The peer is looked up when the upstream speaks (the virtual server is built after the upstreams).
    const peer: UpstreamPeer = { request: (m, p, signal) => peers.shared(u.name).request(m, p, signal), notification: (n) => peers.shared(u.name).notification(n) };
    if (era !== 'no') modern = new ModernSet({ name: u.name, endpoint: this.#remotes.get(u.name)!.endpoint, identity, peer, log });
    if (era === 'only') return { ...common, workers: modern! };
    const session = this.#sessionSet(u, createWorker, throttle);
    if (era === 'try') eraSet = new EraSet(session, modern!, identity, log);
    return { ...common, workers: eraSet ?? session };
  }

  /** The 2025 side of an upstream: a shared pool, or a worker per client session. */
  #sessionSet(u: UpstreamConfig, createWorker: WorkerFactory, throttle: LogThrottle): WorkerSet {
    const { peers, log, diagnostics } = this.options;
    // A pinned 2025 revision is what the gateway asks for when it initializes for no client.
    const identity = u.protocolVersion !== undefined && u.protocolVersion !== 'auto' ? { ...this.options.identity, protocolVersion: u.protocolVersion } : this.options.identity;
    if (u.mode === 'per-session') {
      // A remote upstream session can move with its worker; a child process cannot.
      const remember = this.options.memoryFor;
      const memoryFor = u.transport === 'http' && remember ? (scope: string) => remember(u.name, scope) : undefined;
      return new SessionWorkers(u.name, u.pool, createWorker, (scope) => peers.perSession(u.name, scope), log, diagnostics, memoryFor, throttle);
    }
    return new UpstreamPool(u.name, u.pool, (i) => createWorker(identity, i, peers.shared(u.name)), log, diagnostics, throttle);
  }

  /** One upstream's workers, by transport: child processes, or sessions with a remote server. */
  #workerFactory(u: UpstreamConfig, throttle: LogThrottle, modernProbe: (() => Upstream | undefined) | undefined): WorkerFactory {
    const { identity, log, diagnostics } = this.options;
    if (u.transport === 'stdio') return (clientIdentity, i, peer) => new StdioUpstream(u, clientIdentity, log, i, peer, { diagnostics, throttle });
    const remote = createRemoteUpstream(u, identity, log, diagnostics, this.options.tokens ? { tokens: this.options.tokens } : {}, modernProbe);
    this.#remotes.set(u.name, remote);
    return remote.createWorker;
  }
}
