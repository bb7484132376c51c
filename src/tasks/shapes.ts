// The two shapes of a task: the experimental tasks of 2025-11-25 (ttl, pollInterval, a
// nested `task` on creation, tasks/result) and the 2026-07-28 extension (SEP-2663: ttlMs,
// pollIntervalMs, a flat CreateTaskResult, the result or error inlined on tasks/get).
import type { TaskSupport } from '../config/tasks.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import type { TaskRecord, TaskStatus } from '../contracts/task-store.js';
import { ERRORS, GatewayError, UpstreamRpcError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcErrorObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { META, TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';

/** A catalog route as tasks read it (gateway/catalog.ts's `Route` is one): the tool on its upstream. */
export interface Route {
  upstream: string;
  /** The name the upstream itself uses. */
  original: string;
}

export const TASK_METHODS_2025: ReadonlySet<string> = new Set([
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
]);
export const TASK_METHODS_2026: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);
/** The first revision with (experimental) tasks: older sessions call every tool as before. */
const FIRST_TASKS_VERSION = '2025-11-25';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The Task of 2025-11-25 (tasks/get, tasks/list entries, tasks/cancel, notifications/tasks/status). */
export function task2025(r: TaskRecord): McpResult {
  const task: McpResult = { taskId: r.taskId, status: r.status };
  if (r.statusMessage !== undefined) task.statusMessage = r.statusMessage;
  return {
    ...task,
    createdAt: iso(r.createdAt),
    lastUpdatedAt: iso(r.lastUpdatedAt),
    ttl: r.ttlMs,
    pollInterval: r.pollIntervalMs,
  };
}

/** The Task of the 2026-07-28 extension, without what a status inlines. */
function task2026(r: TaskRecord): McpResult {
  const task: McpResult = { taskId: r.taskId, status: r.status };
  if (r.statusMessage !== undefined) task.statusMessage = r.statusMessage;
  return {
    ...task,
    createdAt: iso(r.createdAt),
    lastUpdatedAt: iso(r.lastUpdatedAt),
    ttlMs: r.ttlMs,
    pollIntervalMs: r.pollIntervalMs,
  };
}

/** What a task-augmented tools/call answers at once. */
export function createTaskResult(r: TaskRecord): McpResult {
  return r.era === '2025-11-25' ? { task: task2025(r) } : { resultType: 'task', ...task2026(r) };
}

/** tasks/get: 2025-11-25 the Task; 2026-07-28 the DetailedTask (result, error or inputRequests inlined). */
export function getTaskResult(r: TaskRecord): McpResult {
  if (r.era === '2025-11-25') return task2025(r);
  const task = task2026(r);
  if (r.status === 'completed' && r.result) task.result = r.result;
  if (r.status === 'failed') task.error = r.error ?? new GatewayError('INTERNAL_ERROR').toJsonRpc();
  if (r.status === 'input_required') task.inputRequests = r.inputRequests ?? {};
  return task;
}

/**
 * How a call's end sets its task: 2025-11-25 counts a tool result with isError as failed;
 * 2026-07-28 keeps `failed` for JSON-RPC errors only.
 */
export function settled(
  r: TaskRecord,
  outcome: { result: McpResult } | { error: JsonRpcErrorObject },
  now: number,
): TaskRecord {
  const next: TaskRecord = { ...r, lastUpdatedAt: now };
  delete next.inputRequests;
  delete next.inputResponses;
  delete next.requestState;
  delete next.statusMessage;
  delete next.params;
  if ('error' in outcome)
    return { ...next, status: 'failed', error: outcome.error, statusMessage: outcome.error.message };
  const result = withoutRelatedTask(outcome.result);
  if (result.resultType === 'input_required' && isObject(result.inputRequests)) {
    const waiting: TaskRecord = {
      ...next,
      status: 'input_required',
      inputRequests: result.inputRequests,
      statusMessage: 'Waiting for input',
    };
    if (typeof result.requestState === 'string') waiting.requestState = result.requestState;
    return waiting;
  }
  const failed = r.era === '2025-11-25' && result.isError === true;
  return {
    ...next,
    status: failed ? 'failed' : 'completed',
    result,
    ...(failed ? { statusMessage: 'The tool reported an error' } : {}),
  };
}

/** A result as the client gets it inlined: the 2025 task key never travels in a 2026 result. */
function withoutRelatedTask(result: McpResult): McpResult {
  if (!isObject(result._meta) || !(META.relatedTask in result._meta)) return result;
  const { [META.relatedTask]: _drop, ...meta } = result._meta;
  return { ...result, _meta: meta };
}

/** tasks/result (2025-11-25): exactly what the call would have returned, tied to its task. */
export function taskResult2025(r: TaskRecord): McpResult {
  if (r.status === 'cancelled') throw new GatewayError('REQUEST_CANCELLED', 'The task was cancelled');
  if (r.error) throw new UpstreamRpcError(r.error);
  const result = r.result ?? {};
  const meta = isObject(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, [META.relatedTask]: { taskId: r.taskId } } };
}

/** What a task's call is, as a later round repeats it: not this request's hint or input round. */
export function callParams(request: JsonRpcRequest): Record<string, unknown> {
  const { task: _hint, requestState: _state, inputResponses: _answers, ...params } = request.params ?? {};
  return params;
}

/** A task whose end does not fit in its principal's bytes (tasks.maxBytesPerPrincipal): failed with that bound. */
export function tooLarge(r: TaskRecord, max: number, now: number): TaskRecord {
  const message = `What the task ended with does not fit in this principal's tasks.maxBytesPerPrincipal (${max})`;
  const error = new GatewayError('TASK_LIMIT', message, { maxBytesPerPrincipal: max });
  return settled(r, { error: error.toJsonRpc() }, now);
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Whether a 2026-07-28 request declares the tasks extension in its own capabilities. */
export function declaresTasks(capabilities: Readonly<Record<string, unknown>>): boolean {
  const ext = capabilities.extensions;
  return isObject(ext) && isObject(ext[TASKS_EXTENSION]);
}

/** -32021, naming the extension (the suite's schema requires data.requiredCapabilities). */
export function tasksExtensionRequired(what: string): GatewayError {
  return new GatewayError(
    'MISSING_CLIENT_CAPABILITY',
    `${ERRORS.MISSING_CLIENT_CAPABILITY.message}: ${what} needs the ${TASKS_EXTENSION} extension`,
    {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    },
  );
}

/** The ttl a 2025-11-25 client asked for (`task.ttl`), bounded; throws on a bad one. */
export function requestedTtl(task: unknown, limits: { defaultTtlMs: number; maxTtlMs: number }): number {
  if (!isObject(task)) throw new GatewayError('TASK_TTL_INVALID', 'Invalid params: task must be an object');
  const ttl = task.ttl;
  if (ttl === undefined || ttl === null) return limits.defaultTtlMs;
  if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl < 0) throw new GatewayError('TASK_TTL_INVALID');
  // At least a second: a task must be readable once it is created.
  return Math.min(Math.max(ttl, 1000), limits.maxTtlMs);
}

/**
 * Whether this client may send this tasks/* method at all (its era's methods, a revision with
 * tasks, the 2026-07-28 extension declared on the request); throws the error it gets otherwise.
 */
export function admitTaskMethod(ctx: RequestContext, method: string): void {
  if (!(ctx.stateless ? TASK_METHODS_2026 : TASK_METHODS_2025).has(method) || !speaksTasks(ctx)) {
    throw new GatewayError('METHOD_NOT_FOUND', `Method not found: ${method}`);
  }
  // Before the id is looked up: a client that did not negotiate tasks learns that, not "unknown task".
  if (ctx.stateless && !declaresTasks(ctx.clientCapabilities)) throw tasksExtensionRequired(method);
}

/** Whether this client can see tasks at all (2025 sessions before 2025-11-25 cannot). */
export function speaksTasks(ctx: RequestContext): boolean {
  return ctx.stateless || ctx.protocolVersion >= FIRST_TASKS_VERSION;
}

/**
 * A tool as an upstream listed it, without the task support the gateway would not honour
 * ("optional", "required"). "forbidden" stays: a call of that tool never becomes a task, with
 * or without a task engine, so the tool lists the same whatever `tasks:` says.
 */
export function withoutTaskSupport(tool: Record<string, unknown>): Record<string, unknown> {
  const execution = isObject(tool.execution) ? tool.execution : undefined;
  if (execution?.taskSupport === undefined || execution.taskSupport === 'forbidden') return tool;
  const { taskSupport: _own, ...rest } = execution;
  return { ...tool, execution: rest };
}

/**
 * tools/list entries with their task support (`execution.taskSupport`) as the gateway runs them:
 * its own (`supportOf`, from `upstreams[].tasks`, which wins), else the upstream's when it runs
 * tasks itself (`keepsOwn`: passed through), else none.
 */
export function decorateTools(
  tools: ReadonlyArray<Record<string, unknown>>,
  supportOf: (route: Route | undefined) => TaskSupport | undefined,
  routeOf: (name: string) => Route | undefined,
  keepsOwn: (upstream: string) => boolean,
): Array<Record<string, unknown>> {
  return tools.map((tool) => {
    const route = routeOf(String(tool.name));
    const support = supportOf(route);
    const execution = isObject(tool.execution) ? tool.execution : undefined;
    if (support) return { ...tool, execution: { ...execution, taskSupport: support } };
    return route && keepsOwn(route.upstream) ? tool : withoutTaskSupport(tool);
  });
}
