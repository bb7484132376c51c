// The tasks extension of 2026-07-28 (SEP-2663), on stateless requests: the extension declared in
// the request's capabilities is the only opt-in and the server decides; a flat CreateTaskResult
// with `ttlMs` and `pollIntervalMs`, tasks/get inlining the result, error or input requests,
// tasks/update answering them, tasks/cancel acknowledged whatever the status. Its call runs in a
// scope of its own, its questions gathered into inputRequests; no session hears of it.
import { NO_SINK } from '../contracts/request-context.js';
import type { TaskRecord } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { TASKS_EXTENSION } from '../jsonrpc/meta-keys.js';
import { addressBinding, BY_ADDRESS } from './binding.js';
import { taskFields, type CallPlan, type TaskEraAdapter } from './era.js';
import { TASK_METHODS_2026, declaresTasks, tasksExtensionRequired } from './shapes.js';
import { endOf } from './transitions.js';

/** A 2026 task's questions are gathered this long into one inputRequests (its client polls anyway). */
const TASK_INPUT_GATHER_MS = 100;
const CALL: CallPlan = { as: 'call' };

/** The Task of the 2026-07-28 extension, without what a status inlines. */
function task2026(r: TaskRecord): McpResult {
  return taskFields(r, 'ttlMs', 'pollIntervalMs');
}

/** tasks/get of 2026-07-28: the DetailedTask (result, error or inputRequests inlined). */
function detailed(r: TaskRecord): McpResult {
  const task = task2026(r);
  if (r.status === 'completed' && r.result) task.result = r.result;
  if (r.status === 'failed') task.error = r.error ?? new GatewayError('INTERNAL_ERROR').toJsonRpc();
  if (r.status === 'input_required') task.inputRequests = r.inputRequests ?? {};
  return task;
}

function noSuchMethod(method: string): never {
  throw new GatewayError('METHOD_NOT_FOUND', `Method not found: ${method}`);
}

export const ERA_2026: TaskEraAdapter = {
  era: '2026-07-28',
  methods: TASK_METHODS_2026,
  speaksTasks: () => true,
  admit(ctx, method) {
    if (!TASK_METHODS_2026.has(method)) noSuchMethod(method);
    // Before the id is looked up: a client that did not negotiate tasks learns that, not "unknown task".
    if (!declaresTasks(ctx.clientCapabilities)) throw tasksExtensionRequired(method);
  },
  plan(ctx, params, support, limits) {
    // SEP-2663: the server decides; the extension in the request's capabilities is the only opt-in.
    if (!support) return CALL;
    if (!declaresTasks(ctx.clientCapabilities)) {
      if (support === 'required') throw tasksExtensionRequired(`tools/call of ${String(params.name)}`);
      return CALL;
    }
    // A required tool asks for input first (by input_required rounds), as SEP-2663 says a server SHOULD.
    return support === 'required' ? { as: 'adopted' } : { as: 'task', ttlMs: limits.defaultTtlMs };
  },
  anonymousBinding: (ctx) => addressBinding(ctx.remoteAddress),
  // Whoever holds an anonymous task's id may see it (unguessable: 192 random bits; the spec's fallback).
  readsAnonymous: (_ctx, r) => r.binding.startsWith(BY_ADDRESS),
  scopeOf: (_ctx, taskId) => `task:${taskId}`,
  // The request that created the task has been answered: its reply stream is gone.
  runContext: (ctx, r) => ({
    ...ctx,
    scope: r.scope,
    sink: NO_SINK,
    sessionSink: undefined,
    http: undefined,
    inputGatherMs: TASK_INPUT_GATHER_MS,
  }),
  // The call goes on from input_required, with the answers: what it calls is kept until then.
  ended: (outcome, call) => endOf(outcome, false, call),
  created: (r) => ({ resultType: 'task', ...task2026(r) }),
  got: detailed,
  listed: () => noSuchMethod('tasks/list'),
  awaited: () => noSuchMethod('tasks/result'),
  cancelled: () => ({}),
  // An ack whatever the status (idempotent).
  cancelRefused: () => ({}),
  notify: () => undefined,
  upstreamRuns: (_ctx, { speaksStateless, capabilities: caps }) =>
    speaksStateless && isObject(caps.extensions) && isObject(caps.extensions[TASKS_EXTENSION]),
  wrappedWord: 'modern',
  wrappedAnonymous: () => 'anonymous',
  relaysStatus: false,
};
