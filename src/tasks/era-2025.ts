// The experimental tasks of 2025-11-25, on a session: a task-augmented tools/call (`task.ttl`)
// answered with a nested `task`, `ttl` and `pollInterval`, tasks/result waiting for the end, a
// tool error counted as failed, the call's requests to its client on the session's stream, and
// notifications/tasks/status there.
import type { RequestContext } from '../contracts/request-context.js';
import type { TaskRecord } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError, UpstreamRpcError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';
import { sessionBinding } from './binding.js';
import { taskFields, type CallPlan, type TaskEraAdapter } from './era.js';
import { TASK_METHODS_2025, requestedTtl } from './shapes.js';
import { endOf } from './transitions.js';

/** The first revision with (experimental) tasks: older sessions call every tool as before. */
const FIRST_TASKS_VERSION = '2025-11-25';
const CALL: CallPlan = { as: 'call' };

/** The Task of 2025-11-25 (tasks/get, tasks/list entries, tasks/cancel, notifications/tasks/status). */
export function task2025(r: TaskRecord): McpResult {
  return taskFields(r, 'ttl', 'pollInterval');
}

/** tasks/result (2025-11-25): exactly what the call would have returned, tied to its task. */
export function taskResult2025(r: TaskRecord): McpResult {
  if (r.status === 'cancelled') throw new GatewayError('REQUEST_CANCELLED', 'The task was cancelled');
  if (r.error) throw new UpstreamRpcError(r.error);
  const result = r.result ?? {};
  const meta = isObject(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, [META.relatedTask]: { taskId: r.taskId } } };
}

function speaksTasks(ctx: RequestContext): boolean {
  return ctx.protocolVersion >= FIRST_TASKS_VERSION;
}

export const ERA_2025: TaskEraAdapter = {
  era: '2025-11-25',
  methods: TASK_METHODS_2025,
  speaksTasks,
  admit(ctx, method) {
    if (!TASK_METHODS_2025.has(method) || !speaksTasks(ctx))
      throw new GatewayError('METHOD_NOT_FOUND', `Method not found: ${method}`);
  },
  plan(ctx, params, support, limits) {
    if (!speaksTasks(ctx)) return CALL;
    // The client opts in per call (`params.task`); the tool's support says whether it may, or must.
    if (params.task === undefined) {
      if (support === 'required')
        throw new GatewayError('TASK_REQUIRED', `Task augmentation required for tools/call of ${String(params.name)}`);
      return CALL;
    }
    if (!support)
      throw new GatewayError('TASK_NOT_SUPPORTED', `Tool ${String(params.name)} does not support task-augmented calls`);
    return { as: 'task', ttlMs: requestedTtl(params.task, limits) };
  },
  anonymousBinding: (ctx) => sessionBinding(ctx.scope),
  readsAnonymous: (ctx, r) => r.binding === sessionBinding(ctx.scope),
  // The call stays in its session: its per-session worker, its client's answers.
  scopeOf: (ctx) => ctx.scope,
  runContext: (ctx, r, asks) => ({ ...ctx, sink: asks(ctx, r.taskId), http: undefined }),
  // A tool result with isError is a failed task; the call is never repeated (its input goes by requests).
  ended: (outcome) => endOf(outcome, true),
  created: (r) => ({ task: task2025(r) }),
  got: task2025,
  listed: task2025,
  awaited: taskResult2025,
  cancelled: task2025,
  cancelRefused(refusal) {
    // -32602: the task had already ended.
    throw refusal;
  },
  // A session's calls go to a 2026-07-28 upstream only if it keeps no sessions: its tasks are not this era's.
  upstreamRuns(ctx, { speaksStateless, dualEra, capabilities }) {
    if ((speaksStateless && !dualEra) || !speaksTasks(ctx)) return false;
    const tasks = capabilities.tasks;
    return (
      isObject(tasks) &&
      isObject(tasks.requests) &&
      isObject(tasks.requests.tools) &&
      isObject(tasks.requests.tools.call)
    );
  },
  wrappedWord: 'legacy',
  wrappedAnonymous: (ctx) => sessionBinding(ctx.scope),
  relaysStatus: true,
  // Optional in the spec (the poll is what counts).
  notify(ctx, r) {
    ctx.sessionSink?.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task2025(r) });
  },
};
