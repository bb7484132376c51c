import type { ClientInfo } from '../gateway/context.js';

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
  logLevel?: string;
  createdAt: number;
  /** Per upstream name: the upstream session its per-session worker holds (opaque JSON here). */
  upstreamSessions?: Record<string, unknown>;
}

/**
 * Session persistence. Records expire after `ttlSeconds` without use; `touch` refreshes that
 * idle timer. Implementations may refresh lazily (bounded staleness) but never expire a
 * session that was used within the last ttl.
 */
export interface SessionStore {
  create(record: SessionRecord): Promise<void>;
  /** The record, or undefined when unknown, expired or deleted. Counts as use. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Shallow-merges `patch` into the record; false when the session is gone. */
  update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<boolean>;
  /** true when a live session was deleted. */
  delete(id: string): Promise<boolean>;
  /** Called with the id of every session that expired (not ones deleted explicitly). */
  onExpired(listener: (id: string) => void): void;
  /** Number of live sessions this store knows of (for metrics; may be approximate). */
  size(): Promise<number>;
  close(): Promise<void>;
}
