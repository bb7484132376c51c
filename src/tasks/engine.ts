// Tasks: a tools/call that returns at once with a task, while the gateway runs the call on its
// upstream as an ordinary call (the dispatcher's, through the in-flight table) and records how
// it ends in the task store, where any replica answers tasks/get, tasks/cancel and the rest
// (methods.ts).
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { TaskSupport } from '../config/tasks.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';
import { LIVE, type TaskRecord, type TaskStore } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError, toErrorObject } from '../jsonrpc/errors.js';
import { type JsonRpcId, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { Bus } from '../cluster/bus.js';
import type { Route } from './shapes.js';
import { LocalTasks } from './local.js';
import { sessionBinding } from './binding.js';
import { bindingOf, eraOf, eraOfRecord } from './eras.js';
import { TaskAsks } from './asks.js';
import { TaskMethods } from './methods.js';
import { TaskFollowers } from './followers.js';
import { TaskWaits } from './waits.js';
import { isTerminal, transition, type CallOutcome, type TaskEvent } from './transitions.js';
import { TASK_METHODS_2025, TASK_METHODS_2026, callParams, decorateTools, tooLarge } from './shapes.js';

export interface TaskLimits {
  maxPerPrincipal: number;
  maxBytesPerPrincipal: number;
  defaultTtlMs: number;
  maxTtlMs: number;
  pollIntervalMs: number;
  /** A required tool's call becomes a task once it has run this long without ending or asking for input. */
  inputWindowMs: number;
}

export interface TaskEngineOptions {
  store: TaskStore;
  replicaId: string;
  /** Where a client's answer that reached another replica is heard (none: one replica). */
  bus?: Bus;
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

export class TaskEngine {
  /** Tasks whose call (or its input chain) this replica ran: a shutdown fails those still live here. */
  readonly #here = new LocalTasks();
  readonly #waits: TaskWaits;
  readonly #followers: TaskFollowers;
  /** Requests 2025 tasks' calls sent their clients: a task is input_required until answered. */
  readonly #asks: TaskAsks;
  readonly #methods: TaskMethods;

  constructor(
    private readonly options: TaskEngineOptions,
    private readonly calls: TaskCalls,
  ) {
    this.#asks = new TaskAsks((taskId, event, ctx) => this.#move(taskId, event, ctx), options.bus);
    const read = async (taskId: string) => {
      const r = await options.store.get(taskId);
      return r && this.#methods.alive(r);
    };
    this.#waits = new TaskWaits(read);
    this.#followers = new TaskFollowers(read);
    this.#methods = new TaskMethods({
      ...options,
      calls,
      here: this.#here,
      waits: this.#waits,
      notify: (ctx, r) => this.#notify(ctx, r),
      resume: (record, ctx, params, call) => this.#resume(record, ctx, params, call),
    });
  }

  /**
   * subscriptions/listen's `taskIds` (2026-07-28): those this client may read, followed on the
   * stream's `sink` (notifications/tasks) until each ends or the stream's scope is released.
   */
  async follow(ctx: RequestContext, taskIds: readonly string[], sink: MessageSink): Promise<string[]> {
    const readable = await Promise.all(taskIds.map((id) => this.#methods.find(ctx, id).catch(() => undefined)));
    return this.#followers.follow(
      ctx.scope,
      readable.filter((r) => r !== undefined),
      sink,
    );
  }

  /** Hears the answers to tasks' requests that reach other replicas. */
  start(): Promise<void> {
    return this.#asks.start(this.options.log);
  }

  /** A 2025 client answered a request: the task it was for (here or on another replica) goes on working. */
  onClientResponse(ctx: RequestContext, id: JsonRpcId | null): void {
    this.#asks.response(ctx.scope, id);
  }

  static handles(method: string): boolean {
    return TASK_METHODS_2025.has(method) || TASK_METHODS_2026.has(method);
  }

  supportOf(route: Route | undefined): TaskSupport | undefined {
    return route ? this.options.support(route.upstream, route.original) : undefined;
  }

  /** tools/list entries with their task support as this gateway runs them (see decorateTools). */
  decorate(
    ctx: RequestContext,
    tools: ReadonlyArray<Record<string, unknown>>,
    routeOf: (name: string) => Route | undefined,
    keepsOwn: (upstream: string) => boolean,
  ): Array<Record<string, unknown>> {
    const supportOf = eraOf(ctx).speaksTasks(ctx) ? (r?: Route) => this.supportOf(r) : () => undefined;
    return decorateTools(tools, supportOf, routeOf, keepsOwn);
  }

  /**
   * A tools/call: its CreateTaskResult when it becomes a task, undefined when it runs as an
   * ordinary call; throws the refusals (a task where none is supported, none where one is required).
   */
  async intercept(ctx: RequestContext, request: JsonRpcRequest, route: Route): Promise<McpResult | undefined> {
    const plan = eraOf(ctx).plan(ctx, request.params ?? {}, this.supportOf(route), this.options.limits);
    if (plan.as === 'call') return undefined;
    if (plan.as === 'adopted') return this.#adopt(ctx, request);
    return this.#create(ctx, request, plan.ttlMs);
  }

  async #create(ctx: RequestContext, request: JsonRpcRequest, ttlMs: number): Promise<McpResult> {
    const record = this.#record(ctx, ttlMs);
    // Durable before it is announced: a tasks/get on any replica finds it (SEP-2663).
    await this.options.store.create(record, this.options.limits);
    this.#here.track(record);
    const params = callParams(request);
    this.#start(record, this.#runContext(ctx, record), params, params, this.#here.hold(ctx));
    return eraOfRecord(record).created(record);
  }

  /**
   * A required tool's call (2026-07-28): it runs first as an ordinary call, so input it asks
   * for at once goes back as an input_required round (the client's retry continues it here);
   * once it has run `inputWindowMs` without asking, or has ended, it is a task.
   */
  async #adopt(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    const { limits, store } = this.options;
    const record = this.#record(ctx, limits.defaultTtlMs);
    const runCtx = this.#runContext(ctx, record);
    // This round's own input fields go with it (a retry continues the round it answers).
    const { task: _hint, ...params } = request.params ?? {};
    const call = this.calls.run(runCtx, { ...request, id: record.requestId, params }).then(
      (result): CallOutcome => ({ result }),
      (err: unknown): CallOutcome => ({ error: toErrorObject(err) }),
    );
    let timer: NodeJS.Timeout | undefined;
    const early = await Promise.race([
      call,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limits.inputWindowMs))),
    ]);
    clearTimeout(timer);
    if (early && 'result' in early && early.result.resultType === 'input_required') return early.result;
    const ended = early && transition(record, eraOfRecord(record).ended(early), Date.now());
    const stored = ended && ended.ok ? ended.record : record;
    try {
      await store.create(stored, limits);
    } catch (err) {
      if (!early) this.calls.cancel(record.scope, record.requestId);
      throw err;
    }
    if (!early) {
      this.#here.track(record);
      this.#follow(record.taskId, call, runCtx, callParams(request), this.#here.hold(ctx));
    }
    return eraOfRecord(stored).created(stored);
  }

  #record(ctx: RequestContext, ttlMs: number): TaskRecord {
    const { limits, replicaId } = this.options;
    const era = eraOf(ctx);
    const taskId = randomBytes(24).toString('base64url');
    const now = Date.now();
    return {
      taskId,
      binding: bindingOf(ctx),
      era: era.era,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: limits.pollIntervalMs,
      owner: replicaId,
      scope: era.scopeOf(ctx, taskId),
      requestId: `task:${taskId}`,
      ...(ctx.endpoint !== undefined ? { endpoint: ctx.endpoint } : {}),
    };
  }

  #runContext(ctx: RequestContext, record: TaskRecord): RequestContext {
    const run = eraOfRecord(record).runContext(ctx, record, (c, taskId) => this.#asks.sink(c, taskId));
    // A round the answers of another endpoint resumed keeps the interceptors of the one that made the task.
    return run.endpoint === record.endpoint ? run : { ...run, endpoint: record.endpoint };
  }

  /**
   * Runs (a round of) the task's call (`params`) and records how it ends; `call` is what the
   * task calls (kept if it asks for input); `release` gives back the in-flight place it keeps.
   */
  #start(record: TaskRecord, ctx: RequestContext, params: Params, call: Params, release: () => void): void {
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: record.requestId, method: 'tools/call', params };
    const running = this.calls.run(ctx, request).then(
      (result): CallOutcome => ({ result }),
      (err: unknown): CallOutcome => ({ error: toErrorObject(err) }),
    );
    this.#follow(record.taskId, running, ctx, call, release);
  }

  #follow(taskId: string, running: Promise<CallOutcome>, ctx: RequestContext, call: Params, release: () => void): void {
    running
      .then((outcome) => {
        release();
        return this.#settle(taskId, outcome, ctx, call);
      })
      .catch((err: unknown) => this.options.log.warn({ err, taskId }, 'task: recording the end of its call failed'));
  }

  async #settle(taskId: string, outcome: CallOutcome, ctx: RequestContext, call: Params): Promise<void> {
    this.#asks.forget(taskId);
    const { store, limits } = this.options;
    const current = await store.get(taskId);
    if (!current) return;
    const ended = transition(current, eraOfRecord(current).ended(outcome, call), Date.now());
    if (!ended.ok) return;
    let next = ended.record;
    let applied: boolean;
    try {
      applied = await store.transition(next, LIVE, limits.maxBytesPerPrincipal);
    } catch (err) {
      if (!(err instanceof GatewayError) || err.type !== 'TASK_LIMIT') throw err;
      // What it ended with does not fit beside the principal's other tasks.
      const failed = transition(current, { type: 'failed', error: tooLarge(limits.maxBytesPerPrincipal) }, Date.now());
      if (!failed.ok) return;
      next = failed.record;
      applied = await store.transition(next, LIVE);
    }
    if (isTerminal(next.status)) this.#here.delete(taskId);
    if (applied) this.#notify(ctx, next);
  }

  /**
   * This replica stops (SIGTERM): every task still live here fails now, with a typed error,
   * rather than when its heartbeat lapses; their calls are cancelled after (by the dispatcher).
   */
  async shutdown(): Promise<number> {
    this.#followers.close();
    await this.#asks.stop();
    return this.#here.failAll(this.options.store, this.options.replicaId, this.options.log);
  }

  /**
   * A scope ended: a 2025 session's tasks (no principal: nobody else may see them) go with it, a listen stream follows
   * none.
   */
  endSession(scope: string): void {
    this.#followers.release(scope);
    const { store, log } = this.options;
    store
      .dropBinding(sessionBinding(scope))
      .catch((err: unknown) => log.warn({ err }, "task: dropping an ended session's tasks failed"));
  }

  /**
   * For tests (internals.ts): the store, the in-flight places tasks' calls keep here, the tasks waited for or followed.
   */
  get held(): { store: TaskStore; places: number; waits: number; followed: number } {
    return {
      store: this.options.store,
      places: this.#here.places,
      waits: this.#waits.size,
      followed: this.#followers.size,
    };
  }

  async #move(taskId: string, event: TaskEvent, ctx: RequestContext): Promise<void> {
    try {
      const r = await this.options.store.get(taskId);
      const moved = r && transition(r, event, Date.now());
      if (!r || !moved || !moved.ok) return;
      const { store, limits } = this.options;
      if (await store.transition(moved.record, [r.status], limits.maxBytesPerPrincipal))
        this.#notify(ctx, moved.record);
    } catch (err) {
      this.options.log.warn({ err, taskId }, 'task: recording a status change failed');
    }
  }

  /** tasks/get, tasks/result, tasks/list, tasks/cancel, tasks/update: see TaskMethods. */
  handle(ctx: RequestContext, request: JsonRpcRequest): Promise<McpResult> {
    return this.#methods.handle(ctx, request);
  }

  /** After tasks/update answered every input request: the call goes on here, with the answers. */
  #resume(record: TaskRecord, ctx: RequestContext, params: Params, call: Params): void {
    this.#here.track(record);
    this.#start(record, this.#runContext(ctx, record), params, call, this.#here.hold(ctx));
  }

  /** A status change, told as the task's era tells it (notifications/tasks/status on a 2025 session). */
  #notify(ctx: RequestContext, r: TaskRecord): void {
    eraOfRecord(r).notify(ctx, r);
  }
}

type Params = Record<string, unknown>;
