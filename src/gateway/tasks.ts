// Tasks: a tools/call that returns at once with a task, while the gateway runs the call on its
// upstream as an ordinary call (the dispatcher's, through the in-flight table) and records how
// it ends in the task store, where any replica answers tasks/get, tasks/cancel and the rest.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { TaskSupport } from '../config/tasks.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import { LIVE, type TaskRecord, type TaskStatus, type TaskStore } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError, toErrorObject } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcErrorObject, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import type { Route } from './catalog.js';
import { LocalTasks } from './local-tasks.js';
import { LEGACY_METHODS, MODERN_METHODS, admitTaskMethod, createTaskResult, declaresTasks, getTaskResult, isTerminal, legacyResult, legacyTask, requestedTtl, settled, speaksTasks, tasksExtensionRequired, withoutTaskSupport } from './task-wire.js';

export interface TaskLimits {
  maxPerPrincipal: number;
  defaultTtlMs: number;
  maxTtlMs: number;
  pollIntervalMs: number;
  /** A required tool's call becomes a task once it has run this long without ending or asking for input. */
  inputWindowMs: number;
}

export interface TaskEngineOptions {
  store: TaskStore;
  replicaId: string;
  /** Whether a replica's heartbeat is fresh (the owner registry's): a dead runner fails its tasks. */
  isAlive: (replicaId: string) => Promise<boolean>;
  limits: TaskLimits;
  /** A tool's task support, by its upstream and the upstream's own name (`upstreams[].tasks`). */
  support: (upstream: string, tool: string) => TaskSupport | undefined;
  pageSize: number;
  log: Logger;
}

/** What the engine asks of the dispatcher: calls run, and cancelled, as every other call is. */
export interface TaskCalls {
  /** Runs a tools/call (params.name as the catalog has it) as an ordinary call. */
  run(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult>;
  /** Cancels the call of (scope, id), here or on the replica that holds it. */
  cancel(scope: string, requestId: string): void;
  /** Ends the input-required chain a requestState names (its worker stops). */
  releaseChain(requestState: string): void;
}

const NO_SINK: MessageSink = { send: () => false };
/** A 2026 task's questions are gathered this long into one inputRequests (its client polls anyway). */
const TASK_INPUT_GATHER_MS = 100;

/**
 * Who may see a task: its principal with auth on; without, a 2025 task belongs to its session
 * and a 2026-07-28 one to whoever holds its id (unguessable: 192 random bits).
 */
function bindingOf(ctx: RequestContext): string {
  if (ctx.principal !== undefined) return `p:${ctx.principal}`;
  return ctx.stateless ? 'anonymous' : `s:${ctx.scope}`;
}

function eraOf(ctx: RequestContext): TaskRecord['era'] {
  return ctx.stateless ? 'modern' : 'legacy';
}

export class TaskEngine {
  /** Requests a task's call sent its 2025 client, answered on this replica: the task goes back to working. */
  readonly #asked = new Map<string, string>();
  /** Tasks whose call (or its input chain) this replica ran: a shutdown fails those still live here. */
  readonly #here = new LocalTasks();

  constructor(
    private readonly options: TaskEngineOptions,
    private readonly calls: TaskCalls,
  ) {}

  static handles(method: string): boolean {
    return LEGACY_METHODS.has(method) || MODERN_METHODS.has(method);
  }

  supportOf(route: Route | undefined): TaskSupport | undefined {
    return route ? this.options.support(route.upstream, route.original) : undefined;
  }

  /**
   * tools/list entries with their task support (`execution.taskSupport`) as this gateway runs
   * them: its own (`upstreams[].tasks`, which wins), else the upstream's when it runs tasks itself
   * (`keepsOwn`: passed through), else none.
   */
  decorate(ctx: RequestContext, tools: ReadonlyArray<Record<string, unknown>>, routeOf: (name: string) => Route | undefined, keepsOwn: (upstream: string) => boolean): Array<Record<string, unknown>> {
    const speaks = speaksTasks(ctx);
    return tools.map((tool) => {
      const route = routeOf(String(tool.name));
      const support = speaks ? this.supportOf(route) : undefined;
      const execution = isObject(tool.execution) ? tool.execution : undefined;
      if (support) return { ...tool, execution: { ...execution, taskSupport: support } };
      return route && keepsOwn(route.upstream) ? tool : withoutTaskSupport(tool);
    });
  }

  /**
   * A tools/call: its CreateTaskResult when it becomes a task, undefined when it runs as an
   * ordinary call; throws the refusals (a task where none is supported, none where one is required).
   */
  async intercept(ctx: RequestContext, request: JsonRpcRequest, route: Route): Promise<McpResult | undefined> {
    const support = this.supportOf(route);
    const params = request.params ?? {};
    if (ctx.stateless) {
      // SEP-2663: the server decides; the extension in the request's capabilities is the only opt-in.
      if (!support) return undefined;
      if (!declaresTasks(ctx.clientCapabilities)) {
        if (support === 'required') throw tasksExtensionRequired(`tools/call of ${String(params.name)}`);
        return undefined;
      }
      // A required tool asks for input first (by input_required rounds), as SEP-2663 says a server SHOULD.
      if (support === 'required') return this.#adopt(ctx, request);
      return this.#create(ctx, request, this.options.limits.defaultTtlMs);
    }
    if (!speaksTasks(ctx)) return undefined;
    if (params.task === undefined) {
      if (support === 'required') throw new GatewayError('TASK_REQUIRED', `Task augmentation required for tools/call of ${String(params.name)}`);
      return undefined;
    }
    if (!support) throw new GatewayError('TASK_NOT_SUPPORTED', `Tool ${String(params.name)} does not support task-augmented calls`);
    return this.#create(ctx, request, requestedTtl(params.task, this.options.limits));
  }

  async #create(ctx: RequestContext, request: JsonRpcRequest, ttlMs: number): Promise<McpResult> {
    const { limits, store } = this.options;
    const record = this.#record(ctx, request, ttlMs);
    // Durable before it is announced: a tasks/get on any replica finds it (SEP-2663).
    if (!(await store.create(record, limits.maxPerPrincipal))) throw taskLimit(limits.maxPerPrincipal);
    this.#here.track(record);
    this.#start(record, this.#runContext(ctx, record), record.params);
    return createTaskResult(record);
  }

  /**
   * A required tool's call (2026-07-28): it runs first as an ordinary call, so input it asks
   * for at once goes back as an input_required round (the client's retry continues it here);
   * once it has run `inputWindowMs` without asking, or has ended, it is a task.
   */
  async #adopt(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const { limits, store } = this.options;
    const record = this.#record(ctx, request, limits.defaultTtlMs);
    const runCtx = this.#runContext(ctx, record);
    // This round's own input fields go with it (a retry continues the round it answers).
    const { task: _hint, ...params } = request.params ?? {};
    const call = this.calls.run(runCtx, { ...request, id: record.requestId, params }).then(
      (result): Outcome => ({ result }),
      (err: unknown): Outcome => ({ error: toErrorObject(err) }),
    );
    let timer: NodeJS.Timeout | undefined;
    const early = await Promise.race([call, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limits.inputWindowMs)))]);
    clearTimeout(timer);
    if (early && 'result' in early && early.result.resultType === 'input_required') return early.result;
    const stored = early ? settled(record, early, Date.now()) : record;
    if (!(await store.create(stored, limits.maxPerPrincipal))) {
      if (!early) this.calls.cancel(record.scope, record.requestId);
      throw taskLimit(limits.maxPerPrincipal);
    }
    if (!early) {
      this.#here.track(record);
      this.#follow(record.taskId, call, runCtx);
    }
    return createTaskResult(stored);
  }

  #record(ctx: RequestContext, request: JsonRpcRequest, ttlMs: number): TaskRecord {
    const { limits, replicaId } = this.options;
    const taskId = randomBytes(24).toString('base64url');
    const now = Date.now();
    // What a later round repeats: the call itself, not this request's hint or input round.
    const { task: _hint, requestState: _state, inputResponses: _answers, ...params } = request.params ?? {};
    return {
      taskId,
      binding: bindingOf(ctx),
      era: eraOf(ctx),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: limits.pollIntervalMs,
      owner: replicaId,
      // A 2025 call stays in its session (its per-session worker, its answers); a 2026 one has a scope of its own.
      scope: ctx.stateless ? `task:${taskId}` : ctx.scope,
      requestId: `task:${taskId}`,
      params,
    };
  }

  #runContext(ctx: RequestContext, record: TaskRecord): RequestContext {
    // The request that created the task has been answered: its reply stream is gone.
    if (record.era === 'modern') return { ...ctx, scope: record.scope, sink: NO_SINK, sessionSink: undefined, http: undefined, inputGatherMs: TASK_INPUT_GATHER_MS };
    return { ...ctx, sink: this.#legacySink(ctx, record.taskId), http: undefined };
  }

  /** Runs (a round of) the task's call and records how it ends. */
  #start(record: TaskRecord, ctx: RequestContext, params: Record<string, unknown>): void {
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: record.requestId, method: 'tools/call', params };
    const call = this.calls.run(ctx, request).then(
      (result): Outcome => ({ result }),
      (err: unknown): Outcome => ({ error: toErrorObject(err) }),
    );
    this.#follow(record.taskId, call, ctx);
  }

  #follow(taskId: string, call: Promise<Outcome>, ctx: RequestContext): void {
    call.then((outcome) => this.#settle(taskId, outcome, ctx)).catch((err: unknown) => this.options.log.warn({ err, taskId }, 'task: recording the end of its call failed'));
  }

  async #settle(taskId: string, outcome: Outcome, ctx: RequestContext): Promise<void> {
    this.#forgetAsked(taskId);
    const current = await this.options.store.get(taskId);
    if (!current || isTerminal(current.status)) return;
    const next = settled(current, outcome, Date.now());
    if (isTerminal(next.status)) this.#here.delete(taskId);
    if (await this.options.store.transition(next, LIVE)) this.#notify(ctx, next);
  }

  /**
   * This replica stops (SIGTERM): every task still live here fails now, with a typed error,
   * rather than when its heartbeat lapses; their calls are cancelled after (by the dispatcher).
   */
  shutdown(): Promise<number> {
    return this.#here.failAll(this.options.store, this.options.replicaId, this.options.log);
  }

  /**
   * A 2025 task's call speaks to its client on the session's own stream (the reply stream of
   * the tools/call is closed); a request it sends (elicitation, sampling) makes the task input_required.
   */
  #legacySink(ctx: RequestContext, taskId: string): MessageSink {
    return {
      send: (message: JsonRpcMessage) => {
        let sent = message;
        if ('method' in message && 'id' in message) {
          const params = isObject(message.params) ? message.params : {};
          const meta = isObject(params._meta) ? params._meta : {};
          sent = { ...message, params: { ...params, _meta: { ...meta, [META.relatedTask]: { taskId } } } } as JsonRpcMessage;
          this.#asked.set(askKey(ctx.scope, message.id), taskId);
          void this.#move(taskId, 'working', 'input_required', ctx);
        }
        return ctx.sessionSink?.send(sent) ?? false;
      },
    };
  }

  /** A call that ended asks nothing more: its unanswered requests are not waited for. */
  #forgetAsked(taskId: string): void {
    for (const [key, id] of this.#asked) if (id === taskId) this.#asked.delete(key);
  }

  /** A 2025 client answered a request: the task it was for goes on working. */
  onClientResponse(ctx: RequestContext, id: JsonRpcId | null): void {
    if (id === null) return;
    const taskId = this.#asked.get(askKey(ctx.scope, id));
    if (taskId === undefined) return;
    this.#asked.delete(askKey(ctx.scope, id));
    void this.#move(taskId, 'input_required', 'working', ctx);
  }

  async #move(taskId: string, from: TaskStatus, to: TaskStatus, ctx: RequestContext): Promise<void> {
    try {
      const r = await this.options.store.get(taskId);
      if (!r || r.status !== from) return;
      const next: TaskRecord = { ...r, status: to, lastUpdatedAt: Date.now() };
      if (to === 'input_required') next.statusMessage = 'Waiting for the client to answer';
      else delete next.statusMessage;
      if (await this.options.store.transition(next, [from])) this.#notify(ctx, next);
    } catch (err) {
      this.options.log.warn({ err, taskId }, 'task: recording a status change failed');
    }
  }

  /** notifications/tasks/status on the 2025 session (optional in the spec; the poll is what counts). */
  #notify(ctx: RequestContext, r: TaskRecord): void {
    if (r.era === 'legacy') ctx.sessionSink?.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: legacyTask(r) });
  }

  /** tasks/get, tasks/result, tasks/list, tasks/cancel (2025-11-25); tasks/get, tasks/update, tasks/cancel (2026-07-28). */
  async handle(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const method = request.method;
    admitTaskMethod(ctx, method);
    if (method === 'tasks/list') return this.#list(ctx, request.params?.cursor);
    const record = await this.#find(ctx, request.params?.taskId);
    switch (method) {
      case 'tasks/get':
        return getTaskResult(record);
      case 'tasks/result':
        return legacyResult(await this.#terminal(ctx, record));
      case 'tasks/cancel':
        return this.#cancel(ctx, record);
      default:
        return this.#update(ctx, record, request.params?.inputResponses);
    }
  }

  /** The task, if the caller may see it; unknown, expired and other principals' ids all read "not found". */
  async #find(ctx: RequestContext, taskId: unknown): Promise<TaskRecord> {
    if (typeof taskId !== 'string') throw new GatewayError('INVALID_PARAMS', 'params.taskId must be a string');
    const record = await this.options.store.get(taskId);
    if (!record || record.binding !== bindingOf(ctx) || record.era !== eraOf(ctx)) throw new GatewayError('TASK_NOT_FOUND');
    return this.#alive(record);
  }

  /** A live task whose runner's heartbeat stopped is failed now: its call died with that replica. */
  async #alive(record: TaskRecord): Promise<TaskRecord> {
    if (isTerminal(record.status) || record.owner === this.options.replicaId || (await this.options.isAlive(record.owner))) return record;
    const lost = new GatewayError('TASK_REPLICA_LOST', undefined, { replica: record.owner }).toJsonRpc();
    const next = settled(record, { error: lost }, Date.now());
    if (await this.options.store.transition(next, [record.status])) return next;
    return (await this.options.store.get(record.taskId)) ?? next;
  }

  /** tasks/result blocks until the task ends (2025-11-25), polling the store: the call may run on any replica. */
  async #terminal(ctx: RequestContext, record: TaskRecord): Promise<TaskRecord> {
    let r = record;
    const waitMs = Math.min(r.pollIntervalMs, 250);
    while (!isTerminal(r.status)) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      r = await this.#find(ctx, r.taskId);
    }
    return r;
  }

  async #cancel(ctx: RequestContext, record: TaskRecord): Promise<McpResult> {
    if (isTerminal(record.status)) {
      // 2026-07-28: an ack whatever the status (idempotent); 2025-11-25: -32602.
      if (record.era === 'modern') return {};
      throw new GatewayError('TASK_TERMINAL', `Cannot cancel task: already in terminal status '${record.status}'`);
    }
    const next: TaskRecord = { ...record, status: 'cancelled', statusMessage: 'The task was cancelled by request.', lastUpdatedAt: Date.now() };
    delete next.inputRequests;
    delete next.inputResponses;
    delete next.requestState;
    if (!(await this.options.store.transition(next, LIVE))) return this.#cancel(ctx, await this.#find(ctx, record.taskId));
    this.#here.delete(record.taskId);
    this.calls.cancel(record.scope, record.requestId);
    if (record.requestState !== undefined) this.calls.releaseChain(record.requestState);
    this.#notify(ctx, next);
    return record.era === 'legacy' ? legacyTask(next) : {};
  }

  /**
   * tasks/update (2026-07-28): answers to the task's inputRequests. Each answered key leaves at
   * once (the next tasks/get, on any replica, no longer shows it); once all are answered the
   * call goes on, on this replica, with every answer. Unknown keys are ignored.
   */
  async #update(ctx: RequestContext, record: TaskRecord, responses: unknown): Promise<McpResult> {
    if (!isObject(responses)) throw new GatewayError('INVALID_PARAMS', 'params.inputResponses must be an object');
    const asked = record.inputRequests;
    if (record.status !== 'input_required' || !asked) return {};
    const answered = Object.keys(responses).filter((k) => Object.hasOwn(asked, k));
    if (answered.length === 0) return {};
    const remaining = { ...asked };
    const collected = { ...record.inputResponses };
    for (const key of answered) {
      delete remaining[key];
      collected[key] = responses[key];
    }
    const done = Object.keys(remaining).length === 0;
    const next: TaskRecord = { ...record, lastUpdatedAt: Date.now(), inputRequests: remaining, inputResponses: collected };
    if (done) {
      Object.assign(next, { status: 'working', owner: this.options.replicaId });
      delete next.inputRequests;
      delete next.inputResponses;
      delete next.requestState;
      delete next.statusMessage;
    }
    if (!(await this.options.store.transition(next, ['input_required']))) return {};
    if (done) {
      this.#here.track(next);
      const params = { ...record.params, inputResponses: collected, ...(record.requestState !== undefined ? { requestState: record.requestState } : {}) };
      this.#start(next, { ...ctx, scope: record.scope, sink: NO_SINK, sessionSink: undefined, http: undefined, inputGatherMs: TASK_INPUT_GATHER_MS }, params);
    }
    return {};
  }

  async #list(ctx: RequestContext, cursor: unknown): Promise<McpResult> {
    if (cursor !== undefined && typeof cursor !== 'string') throw new GatewayError('TASK_CURSOR_INVALID');
    const page = await this.options.store.list(bindingOf(ctx), cursor, this.options.pageSize);
    if (!page) throw new GatewayError('TASK_CURSOR_INVALID');
    const tasks = await Promise.all(page.tasks.filter((t) => t.era === 'legacy').map((t) => this.#alive(t)));
    return page.nextCursor === undefined ? { tasks: tasks.map(legacyTask) } : { tasks: tasks.map(legacyTask), nextCursor: page.nextCursor };
  }
}

type Outcome = { result: McpResult } | { error: JsonRpcErrorObject };

function taskLimit(max: number): GatewayError {
  return new GatewayError('TASK_LIMIT', undefined, { maxPerPrincipal: max });
}

function askKey(scope: string, id: JsonRpcId): string {
  return `${scope}\u0000${typeof id === 'number' ? `n${id}` : `s${id}`}`;
}
