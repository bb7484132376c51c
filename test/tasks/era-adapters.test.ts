/**
 * The two era adapters as modules: what each era's clients see of a task (its shapes, status
 * names, method set), how a tools/call becomes one, where its call runs, how its end counts,
 * how a waiter and a cancel are answered, who may read it; and which adapter eras.ts picks.
 */
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/contracts/request-context.js';
import { NO_SINK } from '../../src/contracts/request-context.js';
import type { TaskRecord, TaskStatus } from '../../src/contracts/task-store.js';
import { GatewayError, UpstreamRpcError } from '../../src/jsonrpc/errors.js';
import { META } from '../../src/jsonrpc/meta-keys.js';
import { ERA_2025 } from '../../src/tasks/era-2025.js';
import { ERA_2026 } from '../../src/tasks/era-2026.js';
import { admitTaskMethod, bindingOf, eraOf, eraOfRecord, mayRead } from '../../src/tasks/eras.js';
import { TASK_METHODS_2025, TASK_METHODS_2026 } from '../../src/tasks/shapes.js';
import { recordingSink, sessionContext } from '../support/in-process.js';
import { TASKS_EXT } from '../support/tasks.js';

const LIMITS = { defaultTtlMs: 60_000, maxTtlMs: 120_000 };
const CREATED = Date.UTC(2026, 0, 2, 3, 4, 5);
const LOST = new GatewayError('TASK_REPLICA_LOST').toJsonRpc();

const session = (over: Partial<RequestContext> = {}) =>
  sessionContext('s1', { protocolVersion: '2025-11-25', ...over });
const stateless = (over: Partial<RequestContext> = {}): RequestContext => ({
  protocolVersion: '2026-07-28',
  stateless: true,
  clientCapabilities: { extensions: { [TASKS_EXT]: {} } },
  clientInfo: { name: 'era-test', version: '1' },
  scope: 'req-1',
  sink: recordingSink(),
  sessionSink: undefined,
  remoteAddress: '127.0.0.1',
  ...over,
});

function record(era: TaskRecord['era'], status: TaskStatus, more: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: 't1',
    binding: era === '2025-11-25' ? 's:s1' : 'a:127.0.0.1',
    era,
    status,
    createdAt: CREATED,
    lastUpdatedAt: CREATED + 1000,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    owner: 'r1',
    scope: era === '2025-11-25' ? 's1' : 'task:t1',
    requestId: 'task:t1',
    ...more,
  };
}

const ISO = { createdAt: '2026-01-02T03:04:05.000Z', lastUpdatedAt: '2026-01-02T03:04:06.000Z' };

function thrown(f: () => unknown): GatewayError {
  try {
    f();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('did not throw');
}

describe('the 2025-11-25 era adapter', () => {
  const r = record('2025-11-25', 'working', { statusMessage: 'busy' });
  const task = { taskId: 't1', status: 'working', statusMessage: 'busy', ...ISO, ttl: 60_000, pollInterval: 500 };

  it('shows the Task with ttl and pollInterval: nested on creation, as is on get, list and cancel', () => {
    expect(ERA_2025.created(r)).toEqual({ task });
    expect(ERA_2025.got(r)).toEqual(task);
    expect(ERA_2025.listed(r)).toEqual(task);
    const cancelled = record('2025-11-25', 'cancelled');
    expect(ERA_2025.cancelled(cancelled)).toMatchObject({ status: 'cancelled', ttl: 60_000 });
    // tasks/get never inlines a result in this era.
    expect(ERA_2025.got(record('2025-11-25', 'completed', { result: { content: [] } }))).not.toHaveProperty('result');
  });

  it('answers a waiter with what the call returned, tied to its task; an error or a cancel thrown', () => {
    const done = record('2025-11-25', 'completed', { result: { content: [], _meta: { keep: 1 } } });
    expect(ERA_2025.awaited(done)).toEqual({ content: [], _meta: { keep: 1, [META.relatedTask]: { taskId: 't1' } } });
    expect(() => ERA_2025.awaited(record('2025-11-25', 'failed', { error: LOST }))).toThrow(UpstreamRpcError);
    expect(thrown(() => ERA_2025.awaited(record('2025-11-25', 'cancelled'))).type).toBe('REQUEST_CANCELLED');
  });

  it('has tasks/get, tasks/result, tasks/list, tasks/cancel, for sessions of 2025-11-25 and later', () => {
    expect(ERA_2025.methods).toBe(TASK_METHODS_2025);
    expect([...ERA_2025.methods]).toEqual(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);
    expect(() => ERA_2025.admit(session(), 'tasks/result')).not.toThrow();
    expect(thrown(() => ERA_2025.admit(session(), 'tasks/update')).type).toBe('METHOD_NOT_FOUND');
    expect(thrown(() => ERA_2025.admit(session({ protocolVersion: '2025-06-18' }), 'tasks/get')).type).toBe(
      'METHOD_NOT_FOUND',
    );
    expect(ERA_2025.speaksTasks(session())).toBe(true);
    expect(ERA_2025.speaksTasks(session({ protocolVersion: '2025-06-18' }))).toBe(false);
  });

  it('makes a task of a call that asks for one (params.task), its ttl bounded; refuses what the tool forbids', () => {
    expect(ERA_2025.plan(session(), { name: 't', task: { ttl: 5000 } }, 'optional', LIMITS)).toEqual({
      as: 'task',
      ttlMs: 5000,
    });
    expect(ERA_2025.plan(session(), { name: 't', task: {} }, 'required', LIMITS)).toEqual({
      as: 'task',
      ttlMs: 60_000,
    });
    expect(ERA_2025.plan(session(), { name: 't', task: { ttl: 1e9 } }, 'optional', LIMITS)).toEqual({
      as: 'task',
      ttlMs: 120_000,
    });
    expect(ERA_2025.plan(session(), { name: 't' }, 'optional', LIMITS)).toEqual({ as: 'call' });
    expect(ERA_2025.plan(session({ protocolVersion: '2025-06-18' }), { task: {} }, 'required', LIMITS)).toEqual({
      as: 'call',
    });
    expect(thrown(() => ERA_2025.plan(session(), { name: 't' }, 'required', LIMITS)).type).toBe('TASK_REQUIRED');
    expect(thrown(() => ERA_2025.plan(session(), { name: 't', task: {} }, undefined, LIMITS)).type).toBe(
      'TASK_NOT_SUPPORTED',
    );
    expect(thrown(() => ERA_2025.plan(session(), { task: { ttl: -1 } }, 'optional', LIMITS)).type).toBe(
      'TASK_TTL_INVALID',
    );
  });

  it("runs the call in its session, its requests through the asks' sink; counts a tool error as failed", () => {
    const ctx = session({ http: { headers: {} } as unknown as RequestContext['http'] });
    const sink = recordingSink();
    const seen: string[] = [];
    const run = ERA_2025.runContext(ctx, r, (_c, taskId) => (seen.push(taskId), sink));
    expect(run).toMatchObject({ scope: 's1', sink, sessionSink: ctx.sessionSink, http: undefined });
    expect(seen).toEqual(['t1']);
    expect(ERA_2025.scopeOf(ctx, 't1')).toBe('s1');
    expect(ERA_2025.ended({ result: { isError: true } }, { name: 'kept?' })).toEqual({
      type: 'failed',
      result: { isError: true },
      statusMessage: 'The tool reported an error',
    });
    const round = ERA_2025.ended({ result: { resultType: 'input_required', inputRequests: {} } }, { name: 't' });
    expect(round).toEqual({ type: 'input-needed', inputRequests: {} });
  });

  it('throws a refused cancel (-32602) and tells the session of a status change', () => {
    const refusal = new GatewayError('TASK_TERMINAL', 'ended');
    expect(() => ERA_2025.cancelRefused(refusal)).toThrow(refusal);
    const ctx = session({ sessionSink: recordingSink() });
    ERA_2025.notify(ctx, r);
    expect((ctx.sessionSink as ReturnType<typeof recordingSink>).messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/tasks/status', params: task },
    ]);
  });

  it('binds an anonymous task to its session, which alone reads it', () => {
    expect(ERA_2025.anonymousBinding(session())).toBe('s:s1');
    expect(ERA_2025.readsAnonymous(session(), r)).toBe(true);
    expect(ERA_2025.readsAnonymous(sessionContext('s2', { protocolVersion: '2025-11-25' }), r)).toBe(false);
  });
});

describe('the 2026-07-28 era adapter', () => {
  const fields = { taskId: 't1', ...ISO, ttlMs: 60_000, pollIntervalMs: 500 };

  it('shows the flat Task with ttlMs and pollIntervalMs; tasks/get inlines the result, error or input requests', () => {
    expect(ERA_2026.created(record('2026-07-28', 'working'))).toEqual({
      resultType: 'task',
      status: 'working',
      ...fields,
    });
    expect(ERA_2026.got(record('2026-07-28', 'completed', { result: { content: [] } }))).toEqual({
      status: 'completed',
      ...fields,
      result: { content: [] },
    });
    expect(ERA_2026.got(record('2026-07-28', 'failed', { error: LOST }))).toMatchObject({
      status: 'failed',
      error: LOST,
    });
    expect(ERA_2026.got(record('2026-07-28', 'failed')).error).toMatchObject({ code: -32603 });
    expect(ERA_2026.got(record('2026-07-28', 'input_required', { inputRequests: { a: {} } }))).toMatchObject({
      status: 'input_required',
      inputRequests: { a: {} },
    });
    expect(ERA_2026.got(record('2026-07-28', 'input_required')).inputRequests).toEqual({});
    expect(ERA_2026.got(record('2026-07-28', 'working'))).toEqual({ status: 'working', ...fields });
  });

  it('has tasks/get, tasks/update, tasks/cancel, for a request that declares the extension', () => {
    expect(ERA_2026.methods).toBe(TASK_METHODS_2026);
    expect([...ERA_2026.methods]).toEqual(['tasks/get', 'tasks/update', 'tasks/cancel']);
    expect(() => ERA_2026.admit(stateless(), 'tasks/update')).not.toThrow();
    expect(thrown(() => ERA_2026.admit(stateless(), 'tasks/result')).type).toBe('METHOD_NOT_FOUND');
    expect(thrown(() => ERA_2026.admit(stateless(), 'tasks/list')).type).toBe('METHOD_NOT_FOUND');
    const without = thrown(() => ERA_2026.admit(stateless({ clientCapabilities: {} }), 'tasks/get'));
    expect(without.type).toBe('MISSING_CLIENT_CAPABILITY');
    expect(without.detail).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXT]: {} } } });
    // No waiter and no list in this era: the method set says so first.
    expect(thrown(() => ERA_2026.awaited(record('2026-07-28', 'completed'))).type).toBe('METHOD_NOT_FOUND');
    expect(thrown(() => ERA_2026.listed(record('2026-07-28', 'completed'))).type).toBe('METHOD_NOT_FOUND');
  });

  it('decides itself: a task of an optional tool, a required one adopted, only with the extension declared', () => {
    expect(ERA_2026.plan(stateless(), { name: 't', task: { ttl: 5 } }, 'optional', LIMITS)).toEqual({
      as: 'task',
      ttlMs: 60_000,
    });
    expect(ERA_2026.plan(stateless(), { name: 't' }, 'required', LIMITS)).toEqual({ as: 'adopted' });
    expect(ERA_2026.plan(stateless(), { name: 't' }, undefined, LIMITS)).toEqual({ as: 'call' });
    expect(ERA_2026.plan(stateless({ clientCapabilities: {} }), { name: 't' }, 'optional', LIMITS)).toEqual({
      as: 'call',
    });
    const refused = thrown(() =>
      ERA_2026.plan(stateless({ clientCapabilities: {} }), { name: 't' }, 'required', LIMITS),
    );
    expect(refused.type).toBe('MISSING_CLIENT_CAPABILITY');
    expect(refused.message).toContain('tools/call of t');
  });

  it('runs the call in a scope of its own, no stream, questions gathered; keeps the call for its rounds', () => {
    const ctx = stateless({ sessionSink: recordingSink() });
    const r = record('2026-07-28', 'working');
    const run = ERA_2026.runContext(ctx, r, () => {
      throw new Error('no asks in this era');
    });
    expect(run).toMatchObject({ scope: 'task:t1', sink: NO_SINK, sessionSink: undefined, http: undefined });
    expect(run.inputGatherMs).toBe(100);
    expect(ERA_2026.scopeOf(ctx, 'xyz')).toBe('task:xyz');
    expect(ERA_2026.ended({ result: { isError: true } })).toEqual({ type: 'completed', result: { isError: true } });
    const round = { resultType: 'input_required', inputRequests: { a: {} }, requestState: 's' };
    expect(ERA_2026.ended({ result: round }, { name: 't' })).toEqual({
      type: 'input-needed',
      inputRequests: { a: {} },
      requestState: 's',
      call: { name: 't' },
    });
  });

  it('acknowledges every cancel, refused or not, and tells no session', () => {
    expect(ERA_2026.cancelled(record('2026-07-28', 'cancelled'))).toEqual({});
    expect(ERA_2026.cancelRefused(new GatewayError('TASK_TERMINAL'))).toEqual({});
    const ctx = stateless({ sessionSink: recordingSink() });
    ERA_2026.notify(ctx, record('2026-07-28', 'completed'));
    expect((ctx.sessionSink as ReturnType<typeof recordingSink>).messages).toEqual([]);
  });

  it('binds an anonymous task to its client address; whoever holds its id reads it', () => {
    expect(ERA_2026.anonymousBinding(stateless({ remoteAddress: '10.0.0.1' }))).toBe('a:10.0.0.1');
    expect(ERA_2026.anonymousBinding(stateless({ remoteAddress: undefined }))).toBe('a:');
    expect(ERA_2026.readsAnonymous(stateless({ remoteAddress: '10.9.9.9' }), record('2026-07-28', 'working'))).toBe(
      true,
    );
    expect(ERA_2026.readsAnonymous(stateless(), record('2026-07-28', 'working', { binding: 'p:bob' }))).toBe(false);
  });
});

describe("an upstream's own tasks, by era", () => {
  const legacyCaps = { tasks: { requests: { tools: { call: {} } } } };
  const statelessCaps = { extensions: { [TASKS_EXT]: {} } };
  const upstream = (speaksStateless: boolean, dualEra: boolean, capabilities: Record<string, unknown>) => ({
    speaksStateless,
    dualEra,
    capabilities,
  });

  it('2025-11-25: a session upstream (or a dual one) that declares tasks.requests.tools.call', () => {
    expect(ERA_2025.upstreamRuns(session(), upstream(false, false, legacyCaps))).toBe(true);
    expect(ERA_2025.upstreamRuns(session(), upstream(true, true, legacyCaps))).toBe(true);
    expect(ERA_2025.upstreamRuns(session(), upstream(true, false, legacyCaps))).toBe(false);
    expect(ERA_2025.upstreamRuns(session({ protocolVersion: '2025-06-18' }), upstream(false, false, legacyCaps))).toBe(
      false,
    );
    expect(ERA_2025.upstreamRuns(session(), upstream(false, false, { tasks: { requests: {} } }))).toBe(false);
    expect(ERA_2025.upstreamRuns(session(), upstream(false, false, statelessCaps))).toBe(false);
  });

  it('2026-07-28: an upstream that speaks 2026-07-28 and declares the extension', () => {
    expect(ERA_2026.upstreamRuns(stateless(), upstream(true, false, statelessCaps))).toBe(true);
    expect(ERA_2026.upstreamRuns(stateless(), upstream(true, true, statelessCaps))).toBe(true);
    expect(ERA_2026.upstreamRuns(stateless(), upstream(false, false, statelessCaps))).toBe(false);
    expect(ERA_2026.upstreamRuns(stateless(), upstream(true, false, legacyCaps))).toBe(false);
  });

  it("signs wrapped ids with the era's old word and, without a principal, the session or nobody", () => {
    expect([ERA_2025.wrappedWord, ERA_2026.wrappedWord]).toEqual(['legacy', 'modern']);
    expect(ERA_2025.wrappedAnonymous(session())).toBe('s:s1');
    expect(ERA_2026.wrappedAnonymous(stateless())).toBe('anonymous');
    expect([ERA_2025.relaysStatus, ERA_2026.relaysStatus]).toEqual([true, false]);
  });
});

describe('which era adapter serves', () => {
  it('a request by whether it is stateless, a task by its era', () => {
    expect(eraOf(session())).toBe(ERA_2025);
    expect(eraOf(stateless())).toBe(ERA_2026);
    expect(eraOfRecord(record('2025-11-25', 'working'))).toBe(ERA_2025);
    expect(eraOfRecord(record('2026-07-28', 'working'))).toBe(ERA_2026);
    expect(thrown(() => admitTaskMethod(session(), 'tasks/update')).type).toBe('METHOD_NOT_FOUND');
    expect(() => admitTaskMethod(stateless(), 'tasks/update')).not.toThrow();
  });

  it("binds to the principal when there is one; a task reads only in its own era, to its binding's holder", () => {
    expect(bindingOf(session({ principal: 'alice' }))).toBe('p:alice');
    expect(bindingOf(stateless({ principal: 'alice' }))).toBe('p:alice');
    expect(bindingOf(session())).toBe('s:s1');
    const alices = record('2026-07-28', 'working', { binding: 'p:alice' });
    expect(mayRead(stateless({ principal: 'alice' }), alices)).toBe(true);
    expect(mayRead(stateless({ principal: 'bob' }), alices)).toBe(false);
    expect(mayRead(session({ principal: 'alice' }), alices)).toBe(false);
    expect(mayRead(stateless(), record('2026-07-28', 'working'))).toBe(true);
    expect(mayRead(stateless(), record('2025-11-25', 'working'))).toBe(false);
    expect(mayRead(session(), record('2025-11-25', 'working'))).toBe(true);
    expect(mayRead(session({ principal: 'alice' }), record('2025-11-25', 'working'))).toBe(false);
  });
});
