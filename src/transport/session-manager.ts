import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { ClientInfo } from '../contracts/request-context.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcId } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { SessionRecord, SessionStore, StoreEnd } from '../session/session-store.js';
import { Rejection } from './error-reply.js';

/**
 * The 2025 sessions of the Streamable HTTP transport in the SessionStore: opened by initialize
 * (bound to the principal that sent it), loaded by the Mcp-Session-Id header for that principal
 * only, ended by DELETE or by expiry. A store that cannot be reached is SESSION_STORE_UNAVAILABLE,
 * from one place (`#unavailable`).
 */
export class SessionManager {
  readonly #store: SessionStore;
  readonly #ended: (sessionId: string) => void;
  readonly #diagnostics: DataPathEvents | undefined;
  readonly #server: string | undefined;

  /**
   * `ended` runs once a session is gone (deleted or expired): what it holds on this replica goes.
   * `server`: the virtual server (its path) whose sessions these are; none: the main endpoint's.
   */
  constructor(store: SessionStore, ended: (sessionId: string) => void, diagnostics?: DataPathEvents, server?: string) {
    this.#store = store;
    this.#ended = ended;
    this.#diagnostics = diagnostics;
    this.#server = server;
    // One store, one virtual server behind every endpoint: the main endpoint's manager hears expiries for all of them.
    if (server === undefined) store.onExpired(ended);
  }

  /**
   * A new session for an initialize request (`id`), already answered by the virtual server at
   * `protocolVersion`. The store's own refusals (its session limits) reach the client as they are.
   */
  async create(
    params: Record<string, unknown>,
    protocolVersion: string,
    principal: string | undefined,
    id: JsonRpcId | null,
    log: FastifyBaseLogger,
    transport?: SessionRecord['transport'],
  ): Promise<SessionRecord> {
    const clientInfo = isObject(params.clientInfo) ? (params.clientInfo as ClientInfo) : undefined;
    const session: SessionRecord = {
      id: randomUUID(),
      protocolVersion,
      clientCapabilities: isObject(params.capabilities) ? params.capabilities : {},
      clientInfo,
      initialized: false,
      createdAt: Date.now(),
    };
    if (principal !== undefined) session.principal = principal;
    if (transport !== undefined) session.transport = transport;
    if (this.#server !== undefined) session.server = this.#server;
    try {
      await this.#store.create(session);
    } catch (err) {
      if (err instanceof GatewayError) throw new Rejection(err.type, err.message, id, err.detail);
      throw this.#unavailable(err, log, id);
    }
    log.info({ session: session.id, client: clientInfo?.name, version: protocolVersion }, 'session opened');
    return session;
  }

  /**
   * The session `sessionId` (the Mcp-Session-Id header, or the legacy transport's query) names,
   * if `principal` opened it through `transport` (undefined: Streamable HTTP).
   */
  async load(
    sessionId: string | undefined,
    principal: string | undefined,
    log: FastifyBaseLogger,
    transport?: SessionRecord['transport'],
  ): Promise<SessionRecord> {
    if (!sessionId)
      throw new Rejection(
        'SESSION_ID_REQUIRED',
        transport === 'legacy-sse' ? 'The sessionId query parameter is required' : undefined,
      );
    let session: SessionRecord | undefined;
    try {
      session = await this.#store.get(sessionId);
    } catch (err) {
      throw this.#unavailable(err, log);
    }
    // Another principal's session is not theirs to learn exists, nor another server's or another transport's session
    // here.
    if (
      !session ||
      session.principal !== principal ||
      session.server !== this.#server ||
      session.transport !== transport
    ) {
      throw new Rejection('SESSION_NOT_FOUND', `Session not found: it expired or was deleted; initialize a new one`);
    }
    return session;
  }

  /** The client sent notifications/initialized: remembered, best effort (nothing waits for it). */
  markInitialized(session: SessionRecord, log: FastifyBaseLogger): void {
    if (session.initialized) return;
    this.#store
      .update(session.id, { initialized: true })
      .catch((err: unknown) => log.warn({ err }, 'session update failed'));
  }

  /** What a connection's initialize said of its client, for the replicas that read the record. */
  async initialize(
    session: SessionRecord,
    patch: Pick<SessionRecord, 'protocolVersion' | 'clientCapabilities' | 'clientInfo'>,
    log: FastifyBaseLogger,
  ): Promise<void> {
    Object.assign(session, patch);
    try {
      await this.#store.update(session.id, patch);
    } catch (err) {
      throw this.#unavailable(err, log);
    }
  }

  /** The session's logging/setLevel: its record at once, the store's (what other replicas read) before the answer. */
  async setLogLevel(session: SessionRecord, level: string, log: FastifyBaseLogger | undefined): Promise<void> {
    session.logLevel = level;
    try {
      await this.#store.update(session.id, { logLevel: level });
    } catch (err) {
      log?.error({ err }, 'session store failure');
      throw new GatewayError('SESSION_STORE_UNAVAILABLE');
    }
  }

  /** The session's found tools (tool search), kept as its log level is: in its record before the answer. */
  async setFoundTools(session: SessionRecord, names: readonly string[], log: FastifyBaseLogger | undefined) {
    session.foundTools = [...names];
    try {
      await this.#store.update(session.id, { foundTools: [...names] });
    } catch (err) {
      log?.error({ err }, 'session store failure');
      throw new GatewayError('SESSION_STORE_UNAVAILABLE');
    }
  }

  /** DELETE of a loaded session: gone from the store, then ended here. */
  async delete(session: SessionRecord, log: FastifyBaseLogger): Promise<void> {
    let deleted: boolean;
    try {
      deleted = await this.#store.delete(session.id);
    } catch (err) {
      throw this.#unavailable(err, log);
    }
    if (!deleted) throw new Rejection('SESSION_NOT_FOUND');
    this.#ended(session.id);
    this.#diagnostics?.emit('session:end', { seconds: secondsSince(session.createdAt), cause: 'deleted' });
    log.info({ session: session.id }, 'session deleted');
  }

  /**
   * A connection's session ended with its connection: gone from the store, best effort (its
   * expiry would remove it anyway); timed when this removed it (not when the store had ended it first).
   */
  forget(session: SessionRecord, log: FastifyBaseLogger): void {
    this.#store.delete(session.id).then(
      (deleted) => {
        if (deleted)
          this.#diagnostics?.emit('session:end', { seconds: secondsSince(session.createdAt), cause: 'closed' });
        log.info({ session: session.id }, 'session closed');
      },
      (err: unknown) => log.warn({ err, session: session.id }, 'session delete failed'),
    );
  }

  #unavailable(err: unknown, log: FastifyBaseLogger, id: JsonRpcId | null = null): Rejection {
    log.error({ err }, 'session store failure');
    return new Rejection('SESSION_STORE_UNAVAILABLE', undefined, id);
  }
}

function secondsSince(createdAt: number): number {
  return (Date.now() - createdAt) / 1000;
}

/**
 * Times the sessions the store ends (idle expiry, eviction at a limit) as DELETE and a closed
 * connection are timed, once per session: a store reports an end with its opening time only on
 * the replica that is to time it (memory: this one; Redis: see RedisSessionStore's #gone, #evict).
 */
export function timeStoreEnds(store: Pick<SessionStore, 'onExpired'>, diagnostics: DataPathEvents): void {
  store.onExpired((_id: string, end: StoreEnd) => {
    if (end.createdAt !== undefined)
      diagnostics.emit('session:end', { seconds: secondsSince(end.createdAt), cause: end.cause });
  });
}
