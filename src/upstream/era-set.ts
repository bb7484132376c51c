import type { Logger } from 'pino';
import { GatewayError } from '../jsonrpc/errors.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamConnection,
  UpstreamCall,
  UpstreamServerInfo,
} from '../contracts/upstream.js';
import { failedCall } from '../contracts/deferred-call.js';
import type { CacheHints } from '../contracts/upstream.js';
import { hasStatelessMeta, refusesStateless, type StatelessSet } from './stateless-set.js';
import { STATELESS_REVISION } from './wires/stateless-http.js';
import type { PoolStatus, UpstreamCaller, WorkerSet } from './worker-set.js';

type Era = 'unknown' | 'modern' | 'session';

/**
 * How long learning the era waits for the initialize sent once discover has answered (after it:
 * a 2025-only upstream gets no extra session): one that never answers initialize must not hold
 * start-up (its 2025 side, found later, still makes it dual from then on).
 */
const SESSION_SIDE_WAIT_MS = 5000;
/** After an initialize probe that got no answer, how long until the next one. */
const SESSION_SIDE_RETRY_MS = 60_000;

/**
 * One initialize as the gateway, its session ended at once: what the upstream's 2025 side says (it rejects: it has
 * none).
 */
export type SessionProbe = () => Promise<UpstreamServerInfo>;

/**
 * An upstream with `protocolVersion: auto`: which era it speaks is learned before anything else
 * reaches it. server/discover first (2026-07-28); an upstream that refuses it (an error answer,
 * a 4xx, no version the gateway speaks) is spoken to in 2025, by initialize, and that is
 * logged. One that cannot be reached is asked again later. A dual-era upstream is both: its
 * stateless clients' calls go the stateless way, its 2025 clients keep their session path. It is
 * known as dual when its discover names a 2025 revision, or (many a dual server lists only
 * 2026-07-28 there) when it answers an initialize the gateway sends beside discover: a 2025
 * client's server-to-client requests (sampling, elicitation) work on a session only.
 */
export class EraSet implements WorkerSet {
  #era: Era = 'unknown';
  #learning: Promise<void> | undefined;
  #becoming: Promise<void> | undefined;
  #sessionProbing: Promise<void> | undefined;
  /** What the initialize beside discover said (undefined: no 2025 side found, or not asked yet). */
  #sessionSide: UpstreamServerInfo | undefined;
  /** The initialize probe failed without an answer (unreachable, no answer in time): asked again by a later probe(). */
  #askSessionAgain = false;
  #nextSessionAsk = 0;
  readonly #infoListeners: Array<(info: UpstreamServerInfo) => void> = [];

  constructor(
    private readonly session: WorkerSet,
    private readonly stateless: StatelessSet,
    /** How the gateway introduces itself when it starts the 2025 side by itself (a fall-back found late). */
    private readonly identity: ClientIdentity,
    private readonly log: Logger,
    /** How the 2025 side of an upstream whose discover names only 2026-07-28 is looked for. */
    private readonly sessionProbe?: SessionProbe,
  ) {
    // Found by a background retry or the health probe, not by #learn (which falls back itself).
    stateless.onRefused((err) => {
      if (this.#era !== 'unknown' || this.#learning) return;
      this.#fallBack(err);
      this.session
        .probe(this.identity, async () => this.session.info)
        .then(
          (info) => {
            if (info) for (const l of this.#infoListeners) l(info);
          },
          (e: unknown) =>
            this.log.warn(
              { upstream: this.name, err: e instanceof Error ? e.message : String(e) },
              'upstream did not start over 2025 either',
            ),
        );
    });
    session.onInfo((info) => {
      if (this.#era === 'session') for (const l of this.#infoListeners) l(info);
    });
    // Down at start-up, found later: whichever era it then speaks, the catalog hears of it.
    stateless.onInfo((info) => {
      const learned = this.#era === 'unknown' ? this.#becomeStateless() : Promise.resolve();
      void learned.then(() => {
        if (this.#era === 'modern') for (const l of this.#infoListeners) l(info);
      });
    });
  }

  get name(): string {
    return this.session.name;
  }

  /** The learned era, for /readyz and tests. */
  get era(): Era {
    return this.#era;
  }

  get speaksStateless(): boolean {
    return this.#era === 'modern';
  }

  get dualEra(): boolean {
    return this.#era === 'modern' && (this.stateless.dualEra || this.#sessionSide !== undefined);
  }

  /** A 2026-only upstream has no workers per scope; a 2025 one has them as its mode says. */
  get perScope(): boolean {
    return this.#era === 'modern' && !this.dualEra ? false : this.session.perScope;
  }

  get info(): UpstreamServerInfo | undefined {
    return this.#era === 'modern' ? this.stateless.info : this.#era === 'session' ? this.session.info : undefined;
  }

  get scopes(): number {
    return this.session.scopes;
  }

  onInfo(listener: (info: UpstreamServerInfo) => void): void {
    this.#infoListeners.push(listener);
  }

  hints(method: string): CacheHints | undefined {
    return this.#era === 'modern' ? this.stateless.hints(method) : undefined;
  }

  status(): PoolStatus {
    if (this.#era === 'modern' && this.dualEra) return this.#dualStatus();
    if (this.#era === 'modern') return this.stateless.status();
    const status = this.session.status();
    if (this.#era === 'unknown')
      return {
        ...status,
        state: status.state === 'closed' ? 'closed' : this.stateless.status().state === 'down' ? 'down' : 'starting',
        ...this.#lastError(),
      };
    return {
      ...status,
      era: 'session',
      ...(this.session.info ? { protocolVersion: this.session.info.protocolVersion } : {}),
    };
  }

  async probe<T>(identity: ClientIdentity, use: (caller: UpstreamCaller) => Promise<T>): Promise<T> {
    await this.#learn();
    // In the background, at a pace: a probe may serve a request (a stateless client's lists).
    if (this.#askSessionAgain && this.#era === 'modern' && Date.now() >= this.#nextSessionAsk)
      void this.#probeSessionSide();
    return this.#era === 'modern' ? this.stateless.probe(identity, use) : this.session.probe(identity, use);
  }

  call(
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
    scope: string,
    identity: () => ClientIdentity,
  ): UpstreamCall {
    if (this.#era === 'unknown')
      return failedCall(new GatewayError('UPSTREAM_UNAVAILABLE', `Upstream ${this.name} has not answered yet`));
    // A dual-era upstream: a 2025 client's call (no 2026 _meta) keeps its session.
    if (this.#era === 'modern' && (!this.dualEra || hasStatelessMeta(params)))
      return this.stateless.call(method, params, options);
    return this.session.call(method, params, options, scope, identity);
  }

  workerOf(scope: string): UpstreamConnection | undefined {
    return this.session.workerOf(scope);
  }

  release(scope: string, reason?: string): Promise<void> {
    return this.session.release(scope, reason);
  }

  setYielded(scope: string, yielded: boolean): void {
    this.session.setYielded?.(scope, yielded);
  }

  async close(): Promise<void> {
    await Promise.all([this.session.close(), this.stateless.close()]);
  }

  /**
   * Both sides: ready as its discover says, with the 2025 side's workers (its sessions), the
   * requests they have open to their clients, and the revision it answered.
   */
  #dualStatus(): PoolStatus {
    const stateless = this.stateless.status();
    const session = this.session.status();
    const sessionVersion = this.session.info?.protocolVersion ?? this.#sessionSide?.protocolVersion;
    return {
      ...session,
      state: stateless.state,
      inFlight: stateless.inFlight + session.inFlight,
      era: 'dual',
      protocolVersion: STATELESS_REVISION,
      ...(sessionVersion ? { sessionProtocolVersion: sessionVersion } : {}),
      ...this.#lastError(),
    };
  }

  #lastError(): { lastError?: string; lastErrorAt?: string } {
    const { lastError, lastErrorAt } = this.stateless.status();
    return lastError ? { lastError, ...(lastErrorAt ? { lastErrorAt } : {}) } : {};
  }

  #fallBack(err: unknown): void {
    this.#era = 'session';
    this.log.warn(
      { upstream: this.name, err: err instanceof Error ? err.message : String(err) },
      'server/discover failed: speaking 2025 (initialize) to this upstream',
    );
  }

  /** Learns the era once (at a time); an unreachable upstream leaves it unknown, to learn on the next try. */
  #learn(): Promise<void> {
    if (this.#era !== 'unknown') return Promise.resolve();
    this.#learning ??= this.stateless
      .discover()
      .then(
        () => this.#becomeStateless(),
        (err: unknown) => {
          if (!refusesStateless(err)) throw err;
          if (this.#era === 'unknown') this.#fallBack(err);
        },
      )
      .finally(() => {
        this.#learning = undefined;
      });
    return this.#learning;
  }

  /** Discover answered: the era is 2026-07-28, and whether it is dual is known before any call goes by it. */
  #becomeStateless(): Promise<void> {
    this.#becoming ??= (async () => {
      if (!this.stateless.dualEra && this.#sessionSide === undefined) await this.#waitForSessionSide();
      if (this.#era !== 'unknown') return;
      this.#era = 'modern';
      if (this.#sessionSide) this.#saySessionSide(this.#sessionSide);
    })().finally(() => {
      this.#becoming = undefined;
    });
    return this.#becoming;
  }

  /** The initialize probe (the one running, or a new one), waited for SESSION_SIDE_WAIT_MS at most. */
  async #waitForSessionSide(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SESSION_SIDE_WAIT_MS);
      timer.unref();
    });
    try {
      await Promise.race([this.#probeSessionSide(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  #saySessionSide(info: UpstreamServerInfo): void {
    this.log.info(
      { upstream: this.name, version: info.protocolVersion },
      'upstream speaks 2025 too (initialize): 2025 clients keep a session with it',
    );
  }

  /** One initialize probe at a time. */
  #probeSessionSide(): Promise<void> {
    this.#sessionProbing ??= this.#findSessionSide().finally(() => {
      this.#sessionProbing = undefined;
    });
    return this.#sessionProbing;
  }

  /** The initialize beside discover: an answer in a 2025 revision makes the upstream dual. */
  async #findSessionSide(): Promise<void> {
    if (!this.sessionProbe) return;
    this.#askSessionAgain = false;
    try {
      const info = await this.sessionProbe();
      if (info.protocolVersion >= STATELESS_REVISION) return;
      this.#sessionSide = info;
      // Found after the era was learned (its initialize was slow): dual from now on.
      if (this.#era === 'modern') this.#saySessionSide(info);
    } catch (err) {
      // Refused (an error answer, a 4xx): 2026-07-28 only. Not reached: asked again later.
      this.#askSessionAgain = !refusesStateless(err);
      this.#nextSessionAsk = Date.now() + SESSION_SIDE_RETRY_MS;
      this.log.debug(
        { upstream: this.name, err: err instanceof Error ? err.message : String(err) },
        'no 2025 side found (initialize failed)',
      );
    }
  }
}
