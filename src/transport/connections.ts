import type { FastifyBaseLogger } from 'fastify';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionStore } from '../session/session-store.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import type { ClientConnection, InFlightCount } from './client-connection.js';
import { SessionManager } from './session-manager.js';

/** A connection this replica holds, as the registry ends it. */
export interface HeldConnection {
  readonly connection: ClientConnection;
  /** Closes the client's side (stream, socket) with a reason a person can read. */
  hangUp(reason: string): void;
}

/**
 * The sessions of connection-shaped transports (legacy HTTP+SSE, WebSocket) held on this
 * replica. Such a session lives as long as its connection: it is refreshed in the store while the
 * connection is open (so the store's ttl does not expire a quiet one), ended with it, and a
 * session the store ended (expired, evicted, deleted) hangs up its connection.
 */
export class Connections implements InFlightCount {
  readonly sessions: SessionManager;
  readonly #held = new Map<string, HeldConnection>();
  readonly #timer: NodeJS.Timeout;
  #requests = 0;

  constructor(
    store: SessionStore,
    private readonly log: FastifyBaseLogger,
    /** How often held sessions are refreshed in the store (well inside its ttl). */
    refreshMs: number,
    /** Where a session that ends with its connection is timed (session:end). */
    diagnostics?: DataPathEvents,
  ) {
    this.sessions = new SessionManager(store, (id) => this.#held.get(id)?.hangUp('session expired'), diagnostics);
    this.#timer = setInterval(() => void this.#refresh(), refreshMs);
    this.#timer.unref();
  }

  get size(): number {
    return this.#held.size;
  }

  /** Requests of these sessions being served on this replica (a shutdown lets them finish). */
  get activeRequests(): number {
    return this.#requests;
  }

  began(): void {
    this.#requests++;
  }

  ended(): void {
    this.#requests--;
  }

  /** One copy to every session held here (list_changed: it concerns every client, as on the SSE GET streams). */
  broadcast(message: JsonRpcMessage): void {
    for (const held of this.#held.values()) held.connection.notify(message);
  }

  get(sessionId: string): ClientConnection | undefined {
    return this.#held.get(sessionId)?.connection;
  }

  hold(held: HeldConnection): void {
    this.#held.set(held.connection.session.id, held);
  }

  /**
   * The connection's session ends: its work in flight is released (upstream calls cancelled,
   * per-session workers stopped) and its record deleted. Idempotent.
   */
  end(connection: ClientConnection): void {
    const id = connection.session.id;
    if (this.#held.get(id)?.connection !== connection) return;
    this.#held.delete(id);
    connection.close();
    connection.handler.releaseScope(id);
    this.sessions.forget(connection.session, this.log);
  }

  /** Shutdown: every connection hangs up (their sessions end as they close). */
  closeAll(reason: string): void {
    for (const held of [...this.#held.values()]) held.hangUp(reason);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #refresh(): Promise<void> {
    for (const held of [...this.#held.values()]) {
      const s = held.connection.session;
      try {
        await this.sessions.load(s.id, s.principal, this.log, s.transport);
      } catch (err) {
        // Gone from the store: the connection goes too. A store outage leaves it be.
        if (err instanceof GatewayError && err.type === 'SESSION_NOT_FOUND') held.hangUp('session expired');
      }
    }
  }
}
