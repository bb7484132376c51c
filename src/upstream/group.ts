import type { Logger } from 'pino';
import type { ConfigDiff } from '../config/diff.js';
import type { FairnessConfig, InterceptorConfig, UpstreamConfig } from '../config/schema.js';
import { toolFilter } from '../config/tool-filter.js';
import { actsForUsers } from '../config/remote-upstream.js';
import { speaksStateless } from '../config/upstream-common.js';
import { EraSet } from './era-set.js';
import { StatelessProbe, StatelessSet } from './stateless-set.js';
import { LogThrottle } from '../observability/log-throttle.js';
import type { DataPathEvents } from '../observability/events.js';
import type { Deadline } from '../timing/deadline-timer.js';
import { HandOverWorkers } from './hand-over.js';
import { UpstreamPool } from './pool.js';
import { createRemoteUpstream, type RemoteUpstream } from './remote.js';
import { SessionWorkers, type WorkerFactory } from './session-workers.js';
import type { PoolStatus, WorkerSet } from './worker-set.js';
import { StdioUpstream } from './wires/stdio.js';
import type { ClientIdentity, UpstreamConnection, UpstreamPeer, UpstreamSessionMemory } from '../contracts/upstream.js';
import type { TokenStore } from '../contracts/token-store.js';
import type { ResultCache } from './result-cache.js';

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
  /**
   * Where a per-session worker of a remote upstream remembers its upstream session, so it can move between replicas.
   */
  memoryFor?: (upstream: string, scope: string) => UpstreamSessionMemory;
  /** Where remote upstreams that exchange tokens hold each user's (sealed). */
  tokens?: TokenStore;
  /** The pace of each upstream's repeated log lines, whichever of its workers has them. */
  logRepeatMs: number;
  log: Logger;
  diagnostics: DataPathEvents;
  /** Where 2026-07-28 upstreams keep what they mark cacheable (config `cache`); none: nothing is kept. */
  resultCache?: ResultCache | undefined;
}

/** One configured upstream as the gateway uses it: its workers serve it whatever its sharing mode. */
export interface UpstreamEntry {
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
  /**
   * Per-session workers each opened as its client's user (a per-user grant or claim headers,
   * mode per-session): when the gateway's own discovery cannot list it, the first user's worker does.
   */
  opensPerUser?: boolean;
  /** `upstreams[].fairness`: each principal's share of its calls on this replica; undefined: none. */
  fairness?: FairnessConfig;
  /** `upstreams[].interceptors`: guardrails for its calls and asks only (guardrails/chains.ts). */
  interceptors?: readonly InterceptorConfig[];
}

/** A per-session upstream as the per-session router needs it. */
export interface PerSessionSet {
  workers: WorkerSet;
  /** Hard ceiling of one call, and how long the client may take to answer a request. */
  maxTimeoutMs: number;
}

/**
 * The upstreams a reload's new config gives, built but not serving yet: stage() makes it,
 * commit() puts it in place, discard() stops what it started.
 */
export interface StagedUpstreams {
  /** Per added or changed upstream, the entry it gets: new workers, or the same under a new policy. */
  readonly entries: ReadonlyMap<string, UpstreamEntry>;
  /** Upstreams whose workers are new (what discard() stops, what commit() drains the old of). */
  readonly fresh: ReadonlySet<string>;
  readonly removed: readonly string[];
  /** The new config's upstream names, in its order. */
  readonly order: readonly string[];
  readonly remotes: ReadonlyMap<string, RemoteUpstream>;
}

/** Workers a reload replaced or removed, until their calls have ended. */
interface Retiring {
  workers: WorkerSet;
  remote: RemoteUpstream | undefined;
}

/** How often a draining set is looked at for calls still in flight. */
const DRAIN_POLL_MS = 100;

/**
 * The upstreams built from the config (`upstreams[]`): per upstream its workers (child
 * processes, or sessions with a remote server; shared or per session) and, for a remote one,
 * its endpoint and health monitor. It answers for all of them: their status, their health,
 * and their shutdown. Nothing is started here (the gateway's catalog load starts the workers).
 */
export class UpstreamGroup {
  /** Every configured upstream by name, in config order. */
  readonly upstreams = new Map<string, UpstreamEntry>();
  readonly #remotes = new Map<string, RemoteUpstream>();
  /** Kept current across reloads: the per-session router reads it per call. */
  readonly #perSession = new Map<string, PerSessionSet>();
  readonly #retiring = new Set<Retiring>();
  #onHealth: ((upstream: string, available: boolean) => void) | undefined;

  constructor(
    configs: readonly UpstreamConfig[],
    private readonly options: UpstreamGroupOptions,
  ) {
    for (const u of configs) {
      const { entry, remote } = this.#build(u);
      this.upstreams.set(u.name, entry);
      if (remote) this.#remotes.set(u.name, remote);
    }
    this.#syncPerSession();
  }

  /**
   * The per-session upstreams, for the router that runs their calls on the owner replica (the same map after a reload).
   */
  perSession(): Map<string, PerSessionSet> {
    return this.#perSession;
  }

  /** Workers replaced or removed by a reload whose calls in flight have not ended yet. */
  get retiring(): number {
    return this.#retiring.size;
  }

  /**
   * Builds what `diff` adds or changes (nothing started: the catalog's load of the staged entries
   * starts their workers). `next` is the new config's upstreams.
   */
  stage(diff: Pick<ConfigDiff, 'added' | 'changed' | 'removed'>, next: readonly UpstreamConfig[]): StagedUpstreams {
    const byName = new Map(next.map((u) => [u.name, u]));
    const entries = new Map<string, UpstreamEntry>();
    const fresh = new Set<string>();
    const remotes = new Map<string, RemoteUpstream>();
    const rebuild = [
      ...diff.added.map((u) => u.name),
      ...diff.changed.filter((c) => c.kind === 'workers').map((c) => c.name),
    ];
    for (const name of rebuild) {
      const { entry, remote } = this.#build(byName.get(name)!);
      entries.set(name, entry);
      fresh.add(name);
      if (remote) remotes.set(name, remote);
    }
    for (const change of diff.changed.filter((c) => c.kind === 'policy')) {
      const running = this.upstreams.get(change.name)!;
      entries.set(change.name, { ...this.#policy(byName.get(change.name)!), workers: running.workers });
    }
    return { entries, fresh, removed: diff.removed, order: next.map((u) => u.name), remotes };
  }

  /**
   * Puts `staged` in place: calls from now on go to its entries. Replaced shared workers and
   * removed upstreams drain (their calls in flight finish where they started, for at most the
   * old hard ceiling `maxTimeoutMs`) and then stop; a replaced per-session upstream hands over
   * (see hand-over.ts).
   */
  commit(staged: StagedUpstreams): void {
    const previous = new Map(this.upstreams);
    const previousRemotes = new Map(this.#remotes);
    this.upstreams.clear();
    const handedOver = new Set<string>();
    for (const name of staged.order) {
      const old = previous.get(name);
      let entry = staged.entries.get(name) ?? old!;
      if (old && staged.fresh.has(name) && old.workers.perScope && entry.workers.perScope) {
        const remote = previousRemotes.get(name);
        entry = { ...entry, workers: new HandOverWorkers(old.workers, entry.workers, async () => remote?.close()) };
        handedOver.add(name);
      }
      this.upstreams.set(name, entry);
    }
    for (const [name, old] of previous) {
      const gone = staged.removed.includes(name);
      if (gone || (staged.fresh.has(name) && !handedOver.has(name))) this.#retire(old, previousRemotes.get(name));
      if (gone || staged.fresh.has(name)) this.#remotes.delete(name);
    }
    for (const [name, remote] of staged.remotes) {
      this.#remotes.set(name, remote);
      this.#watch(name, remote);
    }
    this.#syncPerSession();
  }

  /** A staged reload that will not be applied: the workers it started stop. */
  async discard(staged: StagedUpstreams): Promise<void> {
    await Promise.all([...staged.fresh].flatMap((name) => staged.entries.get(name)?.workers.close() ?? []));
    await Promise.all([...staged.remotes.values()].map((r) => r.close()));
  }

  /** Each upstream's workers, with a remote upstream's circuit: not ready while it is open. */
  status(): Record<string, PoolStatus> {
    const all: Record<string, PoolStatus> = {};
    for (const [name, u] of this.upstreams) {
      const status = u.workers.status();
      const health = this.#remotes.get(name)?.health;
      const info = u.workers.info;
      const withEra: PoolStatus =
        status.era || !info ? status : { ...status, era: 'session', protocolVersion: info.protocolVersion };
      all[name] = health
        ? {
            ...withEra,
            ...health.status(),
            state: !health.available && status.state !== 'closed' ? 'down' : status.state,
          }
        : withEra;
    }
    return all;
  }

  /** Starts pinging the remote upstreams; `onChange` hears each one go down or come back. */
  watchHealth(onChange: (upstream: string, available: boolean) => void): void {
    this.#onHealth = onChange;
    for (const [name, remote] of this.#remotes) this.#watch(name, remote);
  }

  /**
   * Stops every worker (those the gateway closed already stay closed, draining ones too), then the health probes and
   * connections.
   */
  async close(): Promise<void> {
    const retiring = [...this.#retiring];
    this.#retiring.clear();
    await Promise.all([...this.upstreams.values(), ...retiring].map((u) => u.workers.close()));
    await Promise.all([...this.#remotes.values(), ...retiring.map((r) => r.remote)].flatMap((r) => r?.close() ?? []));
  }

  #watch(name: string, remote: RemoteUpstream): void {
    const onChange = this.#onHealth;
    if (!onChange) return; // not started yet: watchHealth() starts them all
    remote.health.onChange((available) => {
      if (this.#remotes.get(name) === remote) onChange(name, available);
    });
    remote.health.start();
  }

  /** Lets the calls in flight on `old` end (bounded by its hard ceiling), then stops it. */
  #retire(old: UpstreamEntry, remote: RemoteUpstream | undefined): void {
    const retiring: Retiring = { workers: old.workers, remote };
    this.#retiring.add(retiring);
    const deadline = Date.now() + old.deadline.maxTimeoutMs;
    const poll = () => {
      if (!this.#retiring.has(retiring)) return; // close() stopped it
      const s = old.workers.status();
      if ((s.inFlight > 0 || s.queued > 0) && Date.now() < deadline) {
        setTimeout(poll, DRAIN_POLL_MS).unref();
        return;
      }
      this.#retiring.delete(retiring);
      this.options.log.info({ upstream: old.workers.name }, 'reload: replaced workers drained, stopping them');
      void old.workers.close().then(() => remote?.close());
    };
    poll();
  }

  #syncPerSession(): void {
    this.#perSession.clear();
    for (const [name, u] of this.upstreams)
      if (u.workers.perScope) this.#perSession.set(name, { workers: u.workers, maxTimeoutMs: u.deadline.maxTimeoutMs });
  }

  /** How the gateway uses an upstream's workers: what a reload changes without replacing them. */
  #policy(u: UpstreamConfig): Omit<UpstreamEntry, 'workers'> {
    return {
      prefix: u.prefix ?? u.name,
      deadline: { timeoutMs: u.timeoutMs, maxTimeoutMs: u.maxTimeoutMs },
      offersTool: toolFilter(u.tools),
      validateArguments: u.validateArguments,
      prefixUris: u.resources?.uris === 'prefixed',
      networkTransport: u.transport === 'stdio' ? 'pipe' : 'tcp',
      ...(u.fairness ? { fairness: u.fairness } : {}),
      ...(u.interceptors && u.interceptors.length > 0 ? { interceptors: u.interceptors } : {}),
      ...(u.mode === 'per-session' && u.transport !== 'stdio' && actsForUsers(u) ? { opensPerUser: true } : {}),
    };
  }

  #build(u: UpstreamConfig): { entry: UpstreamEntry; remote?: RemoteUpstream } {
    const { identity, peers, log } = this.options;
    const common = this.#policy(u);
    // One per upstream: its repeated failures are logged at this pace, whichever worker has them.
    const throttle = new LogThrottle(this.options.logRepeatMs);
    // 2026-07-28 (pinned, or `auto` over http): stateless calls, and server/discover for health.
    const era = speaksStateless(u);
    let stateless: StatelessSet | undefined;
    let eraSet: EraSet | undefined;
    const statelessProbe =
      era === 'no' ? undefined : () => (eraSet?.era === 'session' ? undefined : new StatelessProbe(stateless!));
    const { createWorker, remote } = this.#workerFactory(u, throttle, statelessProbe);
    // The peer is looked up when the upstream speaks (the virtual server is built after the upstreams).
    const peer: UpstreamPeer = {
      request: (m, p, signal) => peers.shared(u.name).request(m, p, signal),
      notification: (n) => peers.shared(u.name).notification(n),
    };
    const cache = this.options.resultCache;
    if (era !== 'no')
      stateless = new StatelessSet({ name: u.name, endpoint: remote!.endpoint, identity, peer, log, cache });
    if (era === 'only') return { entry: { ...common, workers: stateless! }, remote };
    const session = this.#sessionSet(u, createWorker, throttle);
    if (era === 'try') eraSet = new EraSet(session, stateless!, identity, log, () => remote!.initializeOnce());
    return { entry: { ...common, workers: eraSet ?? session }, remote };
  }

  /** The 2025 side of an upstream: a shared pool, or a worker per client session. */
  #sessionSet(u: UpstreamConfig, createWorker: WorkerFactory, throttle: LogThrottle): WorkerSet {
    const { peers, log, diagnostics } = this.options;
    // A pinned 2025 revision is what the gateway asks for when it initializes for no client.
    const identity =
      u.protocolVersion !== undefined && u.protocolVersion !== 'auto'
        ? { ...this.options.identity, protocolVersion: u.protocolVersion }
        : this.options.identity;
    if (u.mode === 'per-session') {
      // A remote upstream session can move with its worker; a child process cannot.
      const remember = this.options.memoryFor;
      const memoryFor = u.transport === 'http' && remember ? (scope: string) => remember(u.name, scope) : undefined;
      return new SessionWorkers(
        u.name,
        u.pool,
        createWorker,
        (scope) => peers.perSession(u.name, scope),
        log,
        diagnostics,
        memoryFor,
        throttle,
      );
    }
    return new UpstreamPool(
      u.name,
      u.pool,
      (i) => createWorker(identity, i, peers.shared(u.name)),
      log,
      diagnostics,
      throttle,
    );
  }

  /** One upstream's workers, by transport: child processes, or sessions with a remote server. */
  #workerFactory(
    u: UpstreamConfig,
    throttle: LogThrottle,
    statelessProbe: (() => UpstreamConnection | undefined) | undefined,
  ): { createWorker: WorkerFactory; remote?: RemoteUpstream } {
    const { identity, log, diagnostics } = this.options;
    if (u.transport === 'stdio')
      return {
        createWorker: (clientIdentity, i, peer) =>
          new StdioUpstream(u, clientIdentity, log, i, peer, { diagnostics, throttle }),
      };
    const remote = createRemoteUpstream(
      u,
      identity,
      log,
      diagnostics,
      this.options.tokens ? { tokens: this.options.tokens } : {},
      statelessProbe,
    );
    return { createWorker: remote.createWorker, remote };
  }
}
