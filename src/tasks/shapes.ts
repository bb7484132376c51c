// What the two eras' task shapes share or read: their method sets, a task's call as a later
// round repeats it, the ttl a 2025 client asks for, the 2026-07-28 extension's opt-in and its
// refusal, a tool's task support in tools/list. Each era's own shapes are its adapter's
// (era-2025.ts, era-2026.ts).
import type { TaskSupport } from '../config/tasks.js';
import { ERRORS, GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcErrorObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import { TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';

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

/** What a task's call is, as a later round repeats it: not this request's hint or input round. */
export function callParams(request: JsonRpcRequest): Record<string, unknown> {
  const { task: _hint, requestState: _state, inputResponses: _answers, ...params } = request.params ?? {};
  return params;
}

/** Why a task whose end does not fit in its principal's bytes (tasks.maxBytesPerPrincipal) failed: that bound. */
export function tooLarge(max: number): JsonRpcErrorObject {
  const message = `What the task ended with does not fit in this principal's tasks.maxBytesPerPrincipal (${max})`;
  return new GatewayError('TASK_LIMIT', message, { maxBytesPerPrincipal: max }).toJsonRpc();
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
