/**
 * A per-session upstream whose workers a reload replaced: the sessions that already have a
 * worker keep it (an upstream session holds state a new worker would not have: subscriptions,
 * roots, whatever the server remembers) until their session ends or the worker idles out; every
 * scope without one gets a worker of the new config. Once the old set holds no scope and no call,
 * it stops, and this set is only the new one.
 */
import type {
  CallOptions,
  ClientIdentity,
  UpstreamConnection,
  UpstreamCall,
  UpstreamServerInfo,
} from '../contracts/upstream.js';
import type { PoolStatus, UpstreamCaller, WorkerSet } from './worker-set.js';

/** How often a hand-over looks whether the old set has emptied (its idle reaper ends scopes too). */
const SWEEP_MS = 5_000;

export class HandOverWorkers implements WorkerSet {
  #old: WorkerSet | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(
    old: WorkerSet,
    private readonly next: WorkerSet,
    /** Runs once the old set has stopped (its remote connection closes then). */
    private readonly retired: () => Promise<void> = async () => undefined,
  ) {
    this.#old = old;
    this.#timer = setInterval(() => this.#sweep(), SWEEP_MS);
    this.#timer.unref();
    this.#sweep();
  }

  get name(): string {
    return this.next.name;
  }

  get perScope(): boolean {
    return this.next.perScope;
  }

  get info(): UpstreamServerInfo | undefined {
    return this.next.info;
  }

  /** Scopes still on a worker of the replaced config (0 once it has stopped). */
  get retiring(): number {
    return this.#old?.scopes ?? 0;
  }

  onInfo(listener: (info: UpstreamServerInfo) => void): void {
    this.next.onInfo(listener);
  }

  status(): PoolStatus {
    const now = this.next.status();
    const old = this.#old?.status();
    return old
      ? {
          ...now,
          workers: now.workers + old.workers,
          inFlight: now.inFlight + old.inFlight,
          queued: now.queued + old.queued,
        }
      : now;
  }

  probe<T>(identity: ClientIdentity, use: (caller: UpstreamCaller) => Promise<T>): Promise<T> {
    return this.next.probe(identity, use);
  }

  call(
    method: string,
    params: Record<string, unknown> | undefined,
    options: CallOptions | undefined,
    scope: string,
    identity: () => ClientIdentity,
  ): UpstreamCall {
    const old = this.#old;
    if (old?.workerOf(scope)) return old.call(method, params, options, scope, identity);
    return this.next.call(method, params, options, scope, identity);
  }

  workerOf(scope: string): UpstreamConnection | undefined {
    return this.#old?.workerOf(scope) ?? this.next.workerOf(scope);
  }

  get scopes(): number {
    return this.next.scopes + (this.#old?.scopes ?? 0);
  }

  async release(scope: string, reason?: string): Promise<void> {
    const old = this.#old;
    await Promise.all([old?.release(scope, reason), this.next.release(scope, reason)]);
    this.#sweep();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    const old = this.#old;
    this.#old = undefined;
    await Promise.all([old?.close().then(this.retired), this.next.close()]);
  }

  #sweep(): void {
    const old = this.#old;
    if (!old) return;
    const status = old.status();
    if (old.scopes > 0 || status.inFlight > 0 || status.queued > 0) return;
    this.#old = undefined;
    clearInterval(this.#timer);
    void old.close().then(this.retired);
  }
}
