// What differs between the two eras of tasks, behind one interface: the 2025-11-25 experimental
// tasks of a session (era-2025.ts) and the 2026-07-28 extension of stateless requests
// (era-2026.ts). The engine and the task methods ask a task's era adapter (eras.ts finds it)
// for the shapes its clients see, its method set, how a call becomes a task, how a waiter is
// answered; they hold no era of their own.
import type { TaskSupport } from '../config/tasks.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import type { TaskEra, TaskRecord } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import type { GatewayError } from '../jsonrpc/errors.js';
import type { CallOutcome, TaskEvent } from './transitions.js';

type Params = Record<string, unknown>;

/**
 * How a tools/call runs: as an ordinary call, as a task at once (kept `ttlMs`), or adopted (run
 * as a call first, a task once it has run tasks.inputWindowMs without asking for input).
 */
export type CallPlan = { as: 'call' } | { as: 'task'; ttlMs: number } | { as: 'adopted' };

export interface TaskEraAdapter {
  readonly era: TaskEra;
  /** The tasks/* methods its clients may send. */
  readonly methods: ReadonlySet<string>;
  /** Whether this client can see tasks at all. */
  speaksTasks(ctx: RequestContext): boolean;
  /** Whether this client may send this tasks/* method at all; throws the error it gets otherwise. */
  admit(ctx: RequestContext, method: string): void;
  /** How a tools/call of a tool with this task support runs; throws its refusals. */
  plan(ctx: RequestContext, params: Params, support: TaskSupport | undefined, limits: TtlLimits): CallPlan;
  /** The binding of a new task without a principal. */
  anonymousBinding(ctx: RequestContext): string;
  /** Whether this client (without a principal) may read a task of this era that has none. */
  readsAnonymous(ctx: RequestContext, r: TaskRecord): boolean;
  /** The scope a new task's call runs under. */
  scopeOf(ctx: RequestContext, taskId: string): string;
  /**
   * The context a task's call (or a round of it) runs in, the request that created it answered;
   * `asks`: the sink of a call whose requests to its client make its task input_required.
   */
  runContext(
    ctx: RequestContext,
    r: TaskRecord,
    asks: (ctx: RequestContext, taskId: string) => MessageSink,
  ): RequestContext;
  /** The event a call's end is; `call` is what a later round repeats. */
  ended(outcome: CallOutcome, call?: Params): TaskEvent;
  /** What a tools/call that became a task answers at once. */
  created(r: TaskRecord): McpResult;
  /** tasks/get. */
  got(r: TaskRecord): McpResult;
  /** A tasks/list entry. */
  listed(r: TaskRecord): McpResult;
  /** tasks/result, once the task ended: how a waiter is answered. */
  awaited(r: TaskRecord): McpResult;
  /** tasks/cancel of a task now cancelled. */
  cancelled(r: TaskRecord): McpResult;
  /** tasks/cancel refused (the task had ended): an answer, or thrown. */
  cancelRefused(refusal: GatewayError): McpResult;
  /** A status change, on the client's session where its era says so. */
  notify(ctx: RequestContext, r: TaskRecord): void;
  /** Whether an upstream runs this era's tasks itself, on the wire this client's calls take to it. */
  upstreamRuns(ctx: RequestContext, upstream: UpstreamTasks): boolean;
  /**
   * What a wrapped id of an upstream's task is signed with: the era's word (the old words,
   * `legacy` and `modern`: they are signed into ids that clients hold) ...
   */
  readonly wrappedWord: 'legacy' | 'modern';
  /** ... and, without a principal, whose it is (no store, nothing to bound). */
  wrappedAnonymous(ctx: RequestContext): string;
  /** Whether an upstream's status notifications of its tasks go to the session that created them. */
  readonly relaysStatus: boolean;
}

/** What decides whether an upstream runs tasks itself: its era, and what it said at initialize. */
export interface UpstreamTasks {
  /** It speaks 2026-07-28 ... */
  speaksStateless: boolean;
  /** ... and keeps sessions too, for 2025 clients. */
  dualEra: boolean;
  capabilities: Record<string, unknown>;
}

export interface TtlLimits {
  defaultTtlMs: number;
  maxTtlMs: number;
}

/** The Task's common fields, with the era's spelling of its ttl and poll interval. */
export function taskFields(r: TaskRecord, ttl: string, pollInterval: string): McpResult {
  const task: McpResult = { taskId: r.taskId, status: r.status };
  if (r.statusMessage !== undefined) task.statusMessage = r.statusMessage;
  return {
    ...task,
    createdAt: new Date(r.createdAt).toISOString(),
    lastUpdatedAt: new Date(r.lastUpdatedAt).toISOString(),
    [ttl]: r.ttlMs,
    [pollInterval]: r.pollIntervalMs,
  };
}
