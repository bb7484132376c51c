import type { Logger } from 'pino';
import type { JsonRpcMessage } from '../../jsonrpc/messages.js';
import { JsonRpcConnection } from './json-rpc-connection.js';
import { initialize, type HandshakeWire } from './initialize.js';
import type {
  CallOptions,
  ClientIdentity,
  UpstreamConnection,
  UpstreamCall,
  UpstreamPeer,
  UpstreamServerInfo,
} from '../../contracts/upstream.js';

/**
 * What every upstream connection shares, whatever carries its messages: the JSON-RPC
 * correlation, the peer its requests and notifications go to, and the listeners a pool
 * watches. A transport only puts messages on its wire (`send`) and feeds what comes back
 * into `connection.receive`.
 */
export abstract class BaseUpstream implements UpstreamConnection {
  protected readonly connection: JsonRpcConnection;
  protected serverInfo: UpstreamServerInfo | undefined;
  readonly #exitListeners: Array<(reason: string) => void> = [];
  readonly #settledListeners: Array<() => void> = [];

  protected constructor(
    readonly label: string,
    peer: UpstreamPeer,
    log: Logger,
  ) {
    this.connection = new JsonRpcConnection((m) => this.send(m), {
      onRequest: async (r, signal) => (r.method === 'ping' ? {} : peer.request(r.method, r.params, signal)),
      onNotification: (n) => peer.notification(n),
      onProtocolError: (reason) => log.warn({ upstream: label, reason }, 'upstream protocol error'),
      onCallSettled: () => {
        for (const l of this.#settledListeners) l();
      },
    });
  }

  /** Puts one outgoing message on this transport's wire. */
  /** Returns what the message weighs where the wire carries messages in order (stdio). */
  protected abstract send(message: JsonRpcMessage): number | void;

  abstract start(): Promise<UpstreamServerInfo>;
  abstract call(method: string, params: Record<string, unknown> | undefined, options?: CallOptions): UpstreamCall;
  abstract close(): Promise<void>;

  get inFlight(): number {
    return this.connection.inFlight;
  }

  get pendingBytes(): number {
    return this.connection.pendingBytes;
  }

  get info(): UpstreamServerInfo | undefined {
    return this.serverInfo;
  }

  onExit(listener: (reason: string) => void): void {
    this.#exitListeners.push(listener);
  }

  onCallSettled(listener: () => void): void {
    this.#settledListeners.push(listener);
  }

  /**
   * The initialize handshake over this connection: its messages go out through `send` unless
   * the wire says otherwise (a call it times itself, a notification it awaits).
   */
  protected handshake(
    identity: ClientIdentity,
    timeoutMs: number,
    wire: Partial<Pick<HandshakeWire, 'call' | 'accepted' | 'notify'>> = {},
  ): Promise<UpstreamServerInfo> {
    return initialize({
      label: this.label,
      identity,
      timeoutMs,
      call: (method, params) => this.connection.call(method, params),
      notify: (method) => this.connection.notify(method),
      ...wire,
    });
  }

  /** The connection ended for a reason other than close(): the pool restarts or replaces it. */
  protected emitExit(reason: string): void {
    for (const l of this.#exitListeners) l(reason);
  }
}
