// The task methods a client sends, answered from the task store on any replica: tasks/get,
// tasks/result, tasks/list and tasks/cancel (2025-11-25), tasks/get, tasks/update and tasks/cancel
// (2026-07-28). The engine (engine.ts) makes the tasks and runs their calls; this reads and moves them.
import type { RequestContext } from '../contracts/request-context.js';
import { LIVE, type TaskRecord, type TaskStore } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { LocalTasks } from './local.js';
import { admitTaskMethod, bindingOf, eraOf, eraOfRecord, mayRead } from './eras.js';
import type { TaskWaits } from './waits.js';
import { answersTo, isTerminal, transition } from './transitions.js';

/** What the methods read and call: the engine's options and parts. */
export interface TaskMethodParts {
  store: TaskStore;
  replicaId: string;
  /** Whether a replica's heartbeat is fresh: a dead runner fails its tasks. */
  isAlive: (replicaId: string) => Promise<boolean>;
  limits: { maxBytesPerPrincipal: number };
  pageSize: number;
  /** Cancels a task's call, ends its input chain. */
  calls: { cancel(scope: string, requestId: string): void; releaseChain(requestState: string): void };
  /** The tasks this replica runs. */
  here: LocalTasks;
  waits: TaskWaits;
  /** notifications/tasks/status on a 2025 session. */
  notify(ctx: RequestContext, r: TaskRecord): void;
  /** A 2026-07-28 task's call goes on (on this replica) with its client's answers. */
  resume(record: TaskRecord, ctx: RequestContext, params: Record<string, unknown>, call: Record<string, unknown>): void;
}

export class TaskMethods {
  readonly #parts: TaskMethodParts;

  constructor(parts: TaskMethodParts) {
    this.#parts = parts;
  }

  /**
   * tasks/get, tasks/result, tasks/list, tasks/cancel (2025-11-25); tasks/get, tasks/update, tasks/cancel (2026-07-28).
   */
  async handle(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const method = request.method;
    admitTaskMethod(ctx, method);
    if (method === 'tasks/list') return this.#list(ctx, request.params?.cursor);
    const record = await this.find(ctx, request.params?.taskId);
    switch (method) {
      case 'tasks/get':
        return eraOfRecord(record).got(record);
      case 'tasks/result':
        return eraOfRecord(record).awaited(await this.#parts.waits.until(record));
      case 'tasks/cancel':
        return this.#cancel(ctx, record);
      default:
        return this.#update(ctx, record, request.params?.inputResponses);
    }
  }

  /** The task, if the caller may see it; unknown, expired and other principals' ids all read "not found". */
  async find(ctx: RequestContext, taskId: unknown): Promise<TaskRecord> {
    if (typeof taskId !== 'string') throw new GatewayError('INVALID_PARAMS', 'params.taskId must be a string');
    const record = await this.#parts.store.get(taskId);
    if (!record || !mayRead(ctx, record)) throw new GatewayError('TASK_NOT_FOUND');
    return this.alive(record);
  }

  /** A live task whose runner's heartbeat stopped is failed now: its call died with that replica. */
  async alive(record: TaskRecord): Promise<TaskRecord> {
    if (
      isTerminal(record.status) ||
      record.owner === this.#parts.replicaId ||
      (await this.#parts.isAlive(record.owner))
    )
      return record;
    const lost = new GatewayError('TASK_REPLICA_LOST', undefined, { replica: record.owner }).toJsonRpc();
    const failed = transition(record, { type: 'failed', error: lost }, Date.now());
    if (!failed.ok) return record;
    const next = failed.record;
    if (await this.#parts.store.transition(next, [record.status])) return next;
    return (await this.#parts.store.get(record.taskId)) ?? next;
  }

  async #cancel(ctx: RequestContext, record: TaskRecord): Promise<McpResult> {
    const cancelled = transition(record, { type: 'cancelled' }, Date.now());
    if (!cancelled.ok) return eraOfRecord(record).cancelRefused(cancelled.refusal);
    const next = cancelled.record;
    if (!(await this.#parts.store.transition(next, LIVE)))
      return this.#cancel(ctx, await this.find(ctx, record.taskId));
    this.#parts.here.delete(record.taskId);
    this.#parts.calls.cancel(record.scope, record.requestId);
    if (record.requestState !== undefined) this.#parts.calls.releaseChain(record.requestState);
    this.#parts.notify(ctx, next);
    return eraOfRecord(next).cancelled(next);
  }

  /**
   * tasks/update (2026-07-28): answers to the task's inputRequests. Each answered key leaves at
   * once (the next tasks/get, on any replica, no longer shows it); once all are answered the
   * call goes on, on this replica, with every answer. Unknown keys are ignored.
   */
  async #update(ctx: RequestContext, record: TaskRecord, responses: unknown): Promise<McpResult> {
    if (!isObject(responses)) throw new GatewayError('INVALID_PARAMS', 'params.inputResponses must be an object');
    const { store, limits, replicaId } = this.#parts;
    // Not waiting for input, or none of these answers is to a pending request: acknowledged, nothing moves.
    const answered = transition(record, { type: 'input-answered', responses, owner: replicaId }, Date.now());
    if (!answered.ok) return {};
    const next = answered.record;
    if (!(await store.transition(next, ['input_required'], limits.maxBytesPerPrincipal))) return {};
    if (next.status === 'working') {
      const { collected } = answersTo(record, responses);
      const call = record.params ?? {};
      const state = record.requestState !== undefined ? { requestState: record.requestState } : {};
      this.#parts.resume(next, ctx, { ...call, inputResponses: collected, ...state }, call);
    }
    return {};
  }

  async #list(ctx: RequestContext, cursor: unknown): Promise<McpResult> {
    if (cursor !== undefined && typeof cursor !== 'string') throw new GatewayError('TASK_CURSOR_INVALID');
    const page = await this.#parts.store.list(bindingOf(ctx), cursor, this.#parts.pageSize);
    if (!page) throw new GatewayError('TASK_CURSOR_INVALID');
    const era = eraOf(ctx);
    const tasks = await Promise.all(page.tasks.filter((t) => t.era === era.era).map((t) => this.alive(t)));
    const listed = tasks.map((t) => era.listed(t));
    return page.nextCursor === undefined ? { tasks: listed } : { tasks: listed, nextCursor: page.nextCursor };
  }
}
