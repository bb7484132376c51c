/**
 * A task record's transitions as pure functions: every event from each status it may happen in,
 * and every refusal (a task that ended stays as it ended; input is answered only while it is
 * waited for), with the record given left as it was.
 */
import { describe, expect, it } from 'vitest';
import type { TaskRecord, TaskStatus } from '../../src/contracts/task-store.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import { META } from '../../src/jsonrpc/meta-keys.js';
import {
  answersTo,
  endOf,
  isTerminal,
  transition,
  type TaskEvent,
  type TaskTransition,
} from '../../src/tasks/transitions.js';

const NOW = 5_000;
const LOST = new GatewayError('TASK_REPLICA_LOST', undefined, { replica: 'r2' }).toJsonRpc();

function record(status: TaskStatus, more: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: 't1',
    binding: 'p:alice',
    era: '2026-07-28',
    status,
    createdAt: 1_000,
    lastUpdatedAt: 1_000,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    owner: 'r1',
    scope: 'task:t1',
    requestId: 'task:t1',
    ...more,
  };
}

/** An input_required task of 2026-07-28, waiting on two keys, one answered already. */
const WAITING = record('input_required', {
  statusMessage: 'Waiting for input',
  inputRequests: { a: { method: 'elicitation/create' }, b: { method: 'sampling/createMessage' } },
  inputResponses: { z: 'earlier' },
  requestState: 'state-1',
  params: { name: 'tool', arguments: { x: 1 } },
});

/** The transition, checking it left its input as it was. */
function apply(r: TaskRecord, event: TaskEvent): TaskTransition {
  const before = structuredClone(r);
  const out = transition(r, event, NOW);
  expect(r).toEqual(before);
  return out;
}

function next(r: TaskRecord, event: TaskEvent): TaskRecord {
  const out = apply(r, event);
  if (!out.ok) throw new Error(`refused: ${out.refusal.message}`);
  return out.record;
}

function refusal(r: TaskRecord, event: TaskEvent): GatewayError {
  const out = apply(r, event);
  if (out.ok) throw new Error(`not refused: ${out.record.status}`);
  return out.refusal;
}

const ROUND_FIELDS = ['inputRequests', 'inputResponses', 'requestState', 'params'] as const;

describe('task transitions', () => {
  it('input needed, by a request to the client (2025): working -> input_required, nothing else changes', () => {
    const r = record('working', { era: '2025-11-25', scope: 's1' });
    expect(next(r, { type: 'input-needed' })).toEqual({
      ...r,
      status: 'input_required',
      statusMessage: 'Waiting for the client to answer',
      lastUpdatedAt: NOW,
    });
  });

  it('input needed, by a request while one is unanswered: refused, the task already waits', () => {
    const r = record('input_required', { era: '2025-11-25', statusMessage: 'Waiting for the client to answer' });
    const refused = refusal(r, { type: 'input-needed' });
    expect(refused.type).toBe('INVALID_PARAMS');
  });

  it('input needed, by an input_required round: its requests, state and call kept, from working or waiting', () => {
    const event: TaskEvent = {
      type: 'input-needed',
      inputRequests: { q: { method: 'elicitation/create' } },
      requestState: 'state-2',
      call: { name: 'tool' },
    };
    for (const from of [record('working', { statusMessage: 'busy' }), WAITING]) {
      const n = next(from, event);
      expect(n).toMatchObject({ status: 'input_required', statusMessage: 'Waiting for input', lastUpdatedAt: NOW });
      expect(n.inputRequests).toEqual({ q: { method: 'elicitation/create' } });
      expect(n.requestState).toBe('state-2');
      expect(n.params).toEqual({ name: 'tool' });
      expect(n.inputResponses).toBeUndefined();
    }
    const bare = next(WAITING, { type: 'input-needed', inputRequests: {} });
    expect(bare.requestState).toBeUndefined();
    expect(bare.params).toBeUndefined();
  });

  it('input answered, the request it was sent (2025): input_required -> working, its message gone', () => {
    const r = record('input_required', { era: '2025-11-25', statusMessage: 'Waiting for the client to answer' });
    const n = next(r, { type: 'input-answered' });
    expect(n).toEqual({ ...r, status: 'working', lastUpdatedAt: NOW, statusMessage: undefined });
    expect('statusMessage' in n).toBe(false);
  });

  it('input answered in part (tasks/update): still waiting, on the keys left; unknown keys ignored', () => {
    const n = next(WAITING, { type: 'input-answered', responses: { a: 'yes', other: 'x' }, owner: 'r9' });
    expect(n).toEqual({
      ...WAITING,
      lastUpdatedAt: NOW,
      inputRequests: { b: { method: 'sampling/createMessage' } },
      inputResponses: { z: 'earlier', a: 'yes' },
    });
  });

  it('input answered in full: working again, run by the replica that took the answers, the round gone', () => {
    const n = next(WAITING, { type: 'input-answered', responses: { a: 1, b: 2 }, owner: 'r9' });
    expect(n).toMatchObject({ status: 'working', owner: 'r9', lastUpdatedAt: NOW });
    for (const field of [...ROUND_FIELDS, 'statusMessage'] as const) expect(n[field]).toBeUndefined();
    expect(next(WAITING, { type: 'input-answered', responses: { a: 1, b: 2 } }).owner).toBe('r1');
  });

  it('input answered when nothing waits for it: refused (not waiting, no requests, no answer to one)', () => {
    expect(refusal(record('working'), { type: 'input-answered' }).type).toBe('INVALID_PARAMS');
    expect(refusal(record('working'), { type: 'input-answered', responses: { a: 1 } }).type).toBe('INVALID_PARAMS');
    const noRequests = record('input_required', { era: '2025-11-25' });
    expect(refusal(noRequests, { type: 'input-answered', responses: { a: 1 } }).type).toBe('INVALID_PARAMS');
    expect(refusal(WAITING, { type: 'input-answered', responses: { other: 1 } }).type).toBe('INVALID_PARAMS');
  });

  it('completed, from working or waiting: its result, without the 2025 related-task key; the round gone', () => {
    const result = { content: [], _meta: { [META.relatedTask]: { taskId: 'x' }, keep: 1 } };
    for (const from of [record('working'), WAITING]) {
      const n = next(from, { type: 'completed', result });
      expect(n).toMatchObject({ status: 'completed', lastUpdatedAt: NOW, result: { content: [], _meta: { keep: 1 } } });
      for (const field of [...ROUND_FIELDS, 'statusMessage'] as const) expect(n[field]).toBeUndefined();
    }
    const plain = { content: [{ type: 'text', text: 'ok' }] };
    expect(next(record('working'), { type: 'completed', result: plain }).result).toBe(plain);
  });

  it('failed, by a JSON-RPC error (its message the status message) or a tool result counted as failed', () => {
    for (const from of [record('working'), WAITING]) {
      const n = next(from, { type: 'failed', error: LOST });
      expect(n).toMatchObject({ status: 'failed', error: LOST, statusMessage: LOST.message, lastUpdatedAt: NOW });
      for (const field of ROUND_FIELDS) expect(n[field]).toBeUndefined();
    }
    const result = { isError: true, content: [] };
    const n = next(record('working'), { type: 'failed', result, statusMessage: 'The tool reported an error' });
    expect(n).toMatchObject({ status: 'failed', result, statusMessage: 'The tool reported an error' });
    expect(n.error).toBeUndefined();
  });

  it('cancelled, from working or waiting: the round and its call gone', () => {
    for (const from of [record('working'), WAITING]) {
      const n = next(from, { type: 'cancelled' });
      expect(n).toMatchObject({
        status: 'cancelled',
        statusMessage: 'The task was cancelled by request.',
        lastUpdatedAt: NOW,
      });
      for (const field of ROUND_FIELDS) expect(n[field]).toBeUndefined();
    }
  });

  it('terminal states stay terminal: every event on a completed, failed or cancelled task is TASK_TERMINAL', () => {
    const events: TaskEvent[] = [
      { type: 'input-needed' },
      { type: 'input-needed', inputRequests: { q: {} } },
      { type: 'input-answered' },
      { type: 'input-answered', responses: { a: 1 } },
      { type: 'completed', result: {} },
      { type: 'failed', error: LOST },
      { type: 'failed', result: { isError: true }, statusMessage: 'x' },
      { type: 'cancelled' },
    ];
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      const r = record(status, { inputRequests: { a: {} }, result: { content: [] } });
      for (const event of events) {
        const refused = refusal(r, event);
        expect(refused).toBeInstanceOf(GatewayError);
        expect(refused.type).toBe('TASK_TERMINAL');
      }
      // What tasks/cancel of a 2025 task answers, word for word.
      expect(refusal(r, { type: 'cancelled' }).message).toBe(
        `Cannot cancel task: already in terminal status '${status}'`,
      );
    }
  });

  it('isTerminal: completed, failed, cancelled', () => {
    expect((['working', 'input_required', 'completed', 'failed', 'cancelled'] as const).filter(isTerminal)).toEqual([
      'completed',
      'failed',
      'cancelled',
    ]);
  });
});

describe('the event a call ends with', () => {
  it('an error: failed', () => {
    expect(endOf({ error: LOST }, true)).toEqual({ type: 'failed', error: LOST });
  });

  it('an input_required round: input needed, with its state if a string and the call if kept', () => {
    const result = { resultType: 'input_required', inputRequests: { a: {} }, requestState: 's' };
    expect(endOf({ result }, false, { name: 'tool' })).toEqual({
      type: 'input-needed',
      inputRequests: { a: {} },
      requestState: 's',
      call: { name: 'tool' },
    });
    expect(endOf({ result: { ...result, requestState: 7 } }, false)).toEqual({
      type: 'input-needed',
      inputRequests: { a: {} },
    });
    // Without requests it is no round: the result is what the call returned.
    const odd = { resultType: 'input_required', inputRequests: 'none' };
    expect(endOf({ result: odd }, false)).toEqual({ type: 'completed', result: odd });
  });

  it('a tool result with isError: failed where the era counts it so, else completed', () => {
    const result = { isError: true, content: [] };
    expect(endOf({ result }, true)).toEqual({ type: 'failed', result, statusMessage: 'The tool reported an error' });
    expect(endOf({ result }, false)).toEqual({ type: 'completed', result });
    expect(endOf({ result: { content: [] } }, true)).toEqual({ type: 'completed', result: { content: [] } });
  });
});

describe('answers to pending input requests', () => {
  it('splits what is answered from what is left, keeping earlier answers', () => {
    expect(answersTo(WAITING, { b: 2, nope: 3 })).toEqual({
      answered: ['b'],
      remaining: { a: { method: 'elicitation/create' } },
      collected: { z: 'earlier', b: 2 },
    });
    expect(answersTo(record('working'), { a: 1 })).toEqual({ answered: [], remaining: {}, collected: {} });
  });
});
