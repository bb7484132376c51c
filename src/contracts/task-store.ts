import type { JsonRpcErrorObject } from '../jsonrpc/messages.js';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);
export const LIVE: readonly TaskStatus[] = ['working', 'input_required'];

/**
 * One task as the gateway keeps it: plain JSON, so any replica can serve it from Redis.
 * `binding` is who may see it (the principal with auth on, else the 2025 session or nobody in
 * particular); `owner` the replica running its call.
 */
export interface TaskRecord {
  taskId: string;
  binding: string;
  /** Which wire form the client speaks: the 2025-11-25 experimental tasks or the 2026-07-28 extension. */
  era: 'legacy' | 'modern';
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  lastUpdatedAt: number;
  ttlMs: number;
  pollIntervalMs: number;
  owner: string;
  /** The scope and request id the call runs under (cancellation finds it by them). */
  scope: string;
  requestId: string;
  /** What the client called (the catalog's name and arguments), for a continuation after input. */
  params: Record<string, unknown>;
  /** The client as the call needs it again after input (2026-07-28: no session holds it). */
  client?: { protocolVersion: string; capabilities: Record<string, unknown>; info?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: JsonRpcErrorObject;
  /** input_required (2026-07-28): what the upstream asks, by key, and the state its retry needs. */
  inputRequests?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

export interface TaskPage {
  tasks: TaskRecord[];
  nextCursor?: string;
}

/**
 * Where tasks live (memory, or Redis for replicas). A record expires `ttlMs` after its
 * creation, by the store (Redis PEXPIRE), whatever its status.
 */
export interface TaskStore {
  /** Stores a new task; false when its binding already holds `maxPerBinding` live tasks. */
  create(record: TaskRecord, maxPerBinding: number): Promise<boolean>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Replaces the record when its current status is one of `from` (a compare-and-set on the
   * status, so a cancelled task stays cancelled whoever finishes last); false otherwise.
   */
  transition(next: TaskRecord, from: readonly TaskStatus[]): Promise<boolean>;
  /** A binding's tasks, oldest first; `cursor` is what the previous page returned (undefined: not one of ours). */
  list(binding: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined>;
  close(): Promise<void>;
}
