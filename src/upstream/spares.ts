// Spare per-session workers: processes started ahead, waiting to learn their client and be
// initialized as it. SessionWorkers takes one for a new scope, or starts a worker when none runs.
import { GatewayError } from '../jsonrpc/errors.js';
import type { ClientIdentity, UpstreamConnection, UpstreamPeer } from '../contracts/upstream.js';

/** A worker started ahead (its process runs), waiting to learn its client and be initialized. */
interface Spare {
  upstream: UpstreamConnection;
  /** Filled in when a scope takes the spare: its client's identity, and where its requests go. */
  binding: { identity: ClientIdentity; peer: UpstreamPeer | undefined };
  exited: boolean;
}

/** What the spares ask of their worker set. */
export interface SpareParts {
  /** How many to keep running (`pool.spares`, as the config says now). */
  wanted: () => number;
  /** The set is closed: none is started any more. */
  closed: () => boolean;
  /** A new worker of the set, for a client named later. */
  create: (identity: ClientIdentity, peer: UpstreamPeer) => UpstreamConnection;
  /** A spare that died unused: a failed start of the upstream. */
  startFailed: (label: string, reason: string) => void;
}

export class Spares {
  readonly #parts: SpareParts;
  #spares: Spare[] = [];
  /** Workers of this transport have nothing to start ahead (remote sessions). */
  #prewarmable = true;

  constructor(parts: SpareParts) {
    this.#parts = parts;
  }

  /**
   * A process start (runtime and imports) costs far more than initialize: with spares, a new
   * session (or a stateless request's chain) gets a process already running, and only
   * initializes it with its own client's identity. A spare that dies unused is not replaced
   * until a scope takes one, so a crashing command does not spin.
   */
  refill(): void {
    while (this.#prewarmable && !this.#parts.closed() && this.#spares.length < this.#parts.wanted()) {
      const binding: Spare['binding'] = {
        identity: { clientInfo: { name: '', version: '' }, capabilities: {}, protocolVersion: '' },
        peer: undefined,
      };
      const peer: UpstreamPeer = {
        request: (method, params, signal) =>
          binding.peer?.request(method, params, signal) ??
          Promise.reject(new GatewayError('METHOD_NOT_FOUND', `${method}: this worker has no client yet`)),
        notification: (n) => binding.peer?.notification(n),
      };
      const upstream = this.#parts.create(binding.identity, peer);
      if (!upstream.prewarm) {
        this.#prewarmable = false;
        return;
      }
      const spare: Spare = { upstream, binding, exited: false };
      upstream.onExit((reason) => {
        spare.exited = true;
        const unused = this.#spares.includes(spare);
        this.#spares = this.#spares.filter((s) => s !== spare);
        // Taken, it is a worker like any other (see SessionWorkers' #start); unused, it never got to start.
        if (unused) this.#parts.startFailed(upstream.label, `spare ${reason}`);
      });
      upstream.prewarm();
      this.#spares.push(spare);
    }
  }

  /** A running spare, bound now to its client (`identity`, `peer`); undefined when none runs. */
  take(identity: ClientIdentity, peer: UpstreamPeer): UpstreamConnection | undefined {
    const spare = this.#spares.find((s) => !s.exited);
    if (!spare) return undefined;
    this.#spares = this.#spares.filter((s) => s !== spare);
    Object.assign(spare.binding.identity, identity);
    spare.binding.peer = peer;
    return spare.upstream;
  }

  /** The set closes: every spare stops. */
  async close(): Promise<void> {
    await Promise.all(this.#spares.splice(0).map((s) => s.upstream.close()));
  }
}
