import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcErrorObject } from '../jsonrpc/messages.js';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);
export const LIVE: readonly TaskStatus[] = ['working', 'input_required'];

/** The revision whose tasks a task speaks: 2025-11-25's experimental tasks or the 2026-07-28 extension. */
export type TaskEra = '2025-11-25' | '2026-07-28';

/** How records written before the eras were named by their dates spell them; they read as the dates. */
const OLD_ERA_NAMES: ReadonlyMap<unknown, TaskEra> = new Map<unknown, TaskEra>([
  ['legacy', '2025-11-25'],
  ['modern', '2026-07-28'],
]);

/** The names records are written with, for one release: the replicas of the one before read no dates. */
const STORED_ERA_NAMES: Readonly<Record<TaskEra, string>> = { '2025-11-25': 'legacy', '2026-07-28': 'modern' };

/**
 * A task record as stored: its era spelled as the previous release reads it, so that replicas of
 * both can serve the same tasks during a rolling upgrade (readTaskRecord takes either spelling).
 */
export function writeTaskRecord(record: TaskRecord): string {
  return JSON.stringify({ ...record, era: STORED_ERA_NAMES[record.era] ?? record.era });
}

/** A stored task record as this version reads it: an `era` of `legacy` or `modern` reads as its date. */
export function readTaskRecord(json: string): TaskRecord {
  const record = JSON.parse(json) as TaskRecord;
  const era = OLD_ERA_NAMES.get(record.era);
  return era === undefined ? record : { ...record, era };
}

/**
 * One task as the gateway keeps it: plain JSON, so any replica can serve it from Redis.
 * `binding` is whose bounds it counts against and, but for an anonymous 2026-07-28 task (read
 * by whoever holds its id), who may see it: the principal with auth on, else the 2025 session,
 * else the client's address. `owner` is the replica running its call.
 */
export interface TaskRecord {
  taskId: string;
  binding: string;
  /** Which task shapes the client speaks (written before their dates named them: `legacy`, `modern`). */
  era: TaskEra;
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
  /**
   * What the client called (the catalog's name and arguments): only while a 2026-07-28 task is
   * input_required, the one state its call goes on from (with the answers, on any replica).
   */
  params?: Record<string, unknown>;
  /**
   * The virtual server's path the task was made through (servers[]); absent: the main endpoint. Its
   * call, every round of it whichever endpoint the answers came by, runs with that server's interceptors.
   */
  endpoint?: string;
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

/** What one binding's live tasks may hold (`tasks.maxPerPrincipal`, `tasks.maxBytesPerPrincipal`). */
export interface TaskBounds {
  readonly maxPerPrincipal: number;
  /**
   * Their records' bytes as JSON, each counted at the largest it has been (a charge never
   * shrinks), and a new one at END_RESERVE_BYTES more.
   */
  readonly maxBytesPerPrincipal: number;
}

/**
 * Where tasks live (memory, or Redis for replicas). A record expires `ttlMs` after its
 * creation, by the store (Redis PEXPIRE), whatever its status.
 */
export interface TaskStore {
  /** Stores a new task; throws TASK_LIMIT (naming the bound) when its binding cannot take it. */
  create(record: TaskRecord, bounds: TaskBounds): Promise<void>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Replaces the record when its current status is one of `from` (a compare-and-set on the
   * status, so a cancelled task stays cancelled whoever finishes last); false otherwise. With
   * `maxBytes`, a record that grows its binding's bytes past it is refused: TASK_LIMIT.
   */
  transition(next: TaskRecord, from: readonly TaskStatus[], maxBytes?: number): Promise<boolean>;
  /** A binding's tasks, oldest first; `cursor` is what the previous page returned (undefined: not one of ours). */
  list(binding: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined>;
  /** Deletes every task of a binding (a 2025 session that ended: nobody else may see them). */
  dropBinding(binding: string): Promise<void>;
  close(): Promise<void>;
}

/** TASK_LIMIT, its data naming the bound a binding reached. */
export function taskLimit(bound: keyof TaskBounds, value: number): GatewayError {
  const message =
    bound === 'maxPerPrincipal'
      ? undefined
      : `Too many bytes of tasks for this principal (tasks.maxBytesPerPrincipal: ${value}); ` +
        'retry when some have expired';
  return new GatewayError('TASK_LIMIT', message, { [bound]: value });
}

/** A record's size as the bounds count it: its JSON's bytes. */
export function recordBytes(json: string): number {
  return Buffer.byteLength(json, 'utf8');
}

/**
 * A new task is charged this much beyond its record: room to record how it ends, when what it
 * ended with did not fit (its failure, with the bound, is that much larger at most).
 */
export const END_RESERVE_BYTES = 1024;
