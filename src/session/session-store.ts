import type { ClientInfo } from '../contracts/request-context.js';

/**
 * What a replica needs to serve a 2025-era session. Plain JSON, so a record can live in Redis
 * as well as in memory.
 */
export interface SessionRecord {
  id: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: ClientInfo | undefined;
  /** Set once the client has sent notifications/initialized. */
  initialized: boolean;
  /** With auth on: who opened the session; nobody else may use it. */
  principal?: string;
  /** Opened on a virtual server (servers[]): its path; usable there only. None: the main endpoint. */
  server?: string;
  logLevel?: string;
  /**
   * Tool search with `expose: list_changed`: the tools the session found (exposed names, the
   * most recent last, at most `toolSearch.exposeMax`), listed to it besides the pinned ones.
   */
  foundTools?: string[];
  createdAt: number;
  /**
   * The client transport whose connection carries the session, when it is not Streamable HTTP:
   * such a session is served only through that transport (legacy HTTP+SSE, WebSocket).
   */
  transport?: 'legacy-sse' | 'websocket';
  /** Per upstream name: the upstream session its per-session worker holds (opaque JSON here). */
  upstreamSessions?: Record<string, unknown>;
}

/** How many sessions a store admits, and when an idle one gives way to a new one. */
export interface SessionLimits {
  maxSessions: number;
  /** Per principal (sessions opened with auth on); 0: no limit. */
  maxPerPrincipal: number;
  /** At a limit, the least recently used session is evicted if unused this long, else the new one is refused. */
  evictIdleMs: number;
}

/**
 * How a session the store ended (not a delete asked of it) ended, and when it was opened when
 * this replica knows (it opened it, or read its record as it went): what its duration is timed from.
 */
export interface StoreEnd {
  /** `expired`: unused for the ttl; `evicted`: made room at a limit (limits.maxSessions, maxSessionsPerPrincipal). */
  cause: 'expired' | 'evicted';
  createdAt: number | undefined;
}

export const UNLIMITED: SessionLimits = { maxSessions: Number.MAX_SAFE_INTEGER, maxPerPrincipal: 0, evictIdleMs: 0 };

/**
 * Session persistence. Records expire after `ttlSeconds` without use; `touch` refreshes that
 * idle timer. Implementations may refresh lazily (bounded staleness) but never expire a
 * session that was used within the last ttl.
 */
export interface SessionStore {
  /**
   * Stores a new session. At a limit it first evicts the least recently used session idle for
   * `evictIdleMs` (reported to onExpired listeners), else throws SESSION_LIMIT or
   * PRINCIPAL_SESSION_LIMIT.
   */
  create(record: SessionRecord): Promise<void>;
  /** The record, or undefined when unknown, expired or deleted. Counts as use. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Shallow-merges `patch` into the record; false when the session is gone. */
  update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean>;
  /** true when a live session was deleted. */
  delete(id: string): Promise<boolean>;
  /** Called with the id of every session that expired or was evicted (not ones deleted explicitly). */
  onExpired(listener: (id: string, end: StoreEnd) => void): void;
  /** Number of live sessions this store knows of (for metrics; may be approximate). */
  size(): Promise<number>;
  close(): Promise<void>;
}
