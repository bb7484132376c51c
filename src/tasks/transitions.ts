// A task record's transitions, as pure functions: given a record, an event and the time, the
// next record, or the refusal (a GatewayError) when the event cannot happen in the record's
// status. The engine and the task methods write what these return (a compare-and-set on the
// status, in the store); whether a refusal reaches the client is theirs to say (tasks/cancel of
// a 2025 task that ended does; a call that ends after its task was cancelled does not).
import type { TaskRecord, TaskStatus } from '../contracts/task-store.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject, type JsonRpcErrorObject } from '../jsonrpc/messages.js';
import { META } from '../jsonrpc/meta-keys.js';

type Params = Record<string, unknown>;

export type TaskEvent =
  /**
   * The call needs its client: with `inputRequests`, its call ended with an input_required round
   * (2026-07-28; `call` is what it goes on from); without, it sent its client a request (2025).
   */
  | { type: 'input-needed'; inputRequests?: Params; requestState?: string; call?: Params }
  /**
   * The client answered: with `responses` (tasks/update), those to pending input requests, and
   * once all are answered the call goes on, run by `owner`; without, the request it was sent.
   */
  | { type: 'input-answered'; responses?: Params; owner?: string }
  | { type: 'completed'; result: McpResult }
  /** A JSON-RPC error (`error`), or a tool result counted as failed (`result`, 2025-11-25). */
  | { type: 'failed'; error: JsonRpcErrorObject }
  | { type: 'failed'; result: McpResult; statusMessage: string }
  | { type: 'cancelled' };

export type TaskTransition = { ok: true; record: TaskRecord } | { ok: false; refusal: GatewayError };

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

const VERB: Readonly<Record<TaskEvent['type'], string>> = {
  'input-needed': 'ask for input of',
  'input-answered': 'answer',
  completed: 'complete',
  failed: 'fail',
  cancelled: 'cancel',
};

/** The next record after `event`, or why there is none: a task that ended stays as it ended. */
export function transition(r: TaskRecord, event: TaskEvent, now: number): TaskTransition {
  if (isTerminal(r.status))
    return refused('TASK_TERMINAL', `Cannot ${VERB[event.type]} task: already in terminal status '${r.status}'`);
  switch (event.type) {
    case 'input-needed':
      return inputNeeded(r, event, now);
    case 'input-answered':
      return inputAnswered(r, event, now);
    case 'completed':
      return ok({ ...ended(r, now), status: 'completed', result: withoutRelatedTask(event.result) });
    case 'failed':
      if ('error' in event)
        return ok({ ...ended(r, now), status: 'failed', error: event.error, statusMessage: event.error.message });
      return ok({
        ...ended(r, now),
        status: 'failed',
        result: withoutRelatedTask(event.result),
        statusMessage: event.statusMessage,
      });
    case 'cancelled':
      return ok({ ...ended(r, now), status: 'cancelled', statusMessage: 'The task was cancelled by request.' });
  }
}

/** How a task's call ended: its result, or the JSON-RPC error it got. */
export type CallOutcome = { result: McpResult } | { error: JsonRpcErrorObject };

/**
 * The event a call's end is: `toolErrorFails` counts a tool result with isError as failed (2025-11-25;
 * 2026-07-28 keeps `failed` for JSON-RPC errors); `call` is kept by an input_required round.
 */
export function endOf(outcome: CallOutcome, toolErrorFails: boolean, call?: Params): TaskEvent {
  if ('error' in outcome) return { type: 'failed', error: outcome.error };
  const result = outcome.result;
  if (result.resultType === 'input_required' && isObject(result.inputRequests)) {
    const event: TaskEvent = { type: 'input-needed', inputRequests: result.inputRequests };
    if (typeof result.requestState === 'string') event.requestState = result.requestState;
    if (call !== undefined) event.call = call;
    return event;
  }
  if (toolErrorFails && result.isError === true)
    return { type: 'failed', result, statusMessage: 'The tool reported an error' };
  return { type: 'completed', result };
}

/** The answers a tasks/update gives to the record's pending input requests (unknown keys left out). */
export function answersTo(
  r: TaskRecord,
  responses: Params,
): { answered: string[]; remaining: Params; collected: Params } {
  const asked = r.inputRequests ?? {};
  const answered = Object.keys(responses).filter((k) => Object.hasOwn(asked, k));
  const remaining = { ...asked };
  const collected = { ...r.inputResponses };
  for (const key of answered) {
    delete remaining[key];
    collected[key] = responses[key];
  }
  return { answered, remaining, collected };
}

function inputNeeded(r: TaskRecord, event: Extract<TaskEvent, { type: 'input-needed' }>, now: number): TaskTransition {
  if (event.inputRequests === undefined) {
    // A request to the client while one is unanswered changes nothing: the task already waits.
    if (r.status !== 'working') return refused('INVALID_PARAMS', 'The task is already waiting for input');
    return ok({
      ...r,
      status: 'input_required',
      statusMessage: 'Waiting for the client to answer',
      lastUpdatedAt: now,
    });
  }
  const next: TaskRecord = {
    ...ended(r, now),
    status: 'input_required',
    inputRequests: event.inputRequests,
    statusMessage: 'Waiting for input',
  };
  if (event.requestState !== undefined) next.requestState = event.requestState;
  if (event.call !== undefined) next.params = event.call;
  return ok(next);
}

function inputAnswered(
  r: TaskRecord,
  event: Extract<TaskEvent, { type: 'input-answered' }>,
  now: number,
): TaskTransition {
  if (r.status !== 'input_required') return refused('INVALID_PARAMS', 'The task is not waiting for input');
  if (event.responses === undefined) {
    const next: TaskRecord = { ...r, status: 'working', lastUpdatedAt: now };
    delete next.statusMessage;
    return ok(next);
  }
  if (!r.inputRequests) return refused('INVALID_PARAMS', 'The task has no pending input requests');
  const { answered, remaining, collected } = answersTo(r, event.responses);
  if (answered.length === 0) return refused('INVALID_PARAMS', 'No answer is to a pending input request');
  if (Object.keys(remaining).length > 0)
    return ok({ ...r, lastUpdatedAt: now, inputRequests: remaining, inputResponses: collected });
  const next: TaskRecord = { ...ended(r, now), status: 'working' };
  if (event.owner !== undefined) next.owner = event.owner;
  return ok(next);
}

/** The record without what a round of input or a status message held: what every end starts from. */
function ended(r: TaskRecord, now: number): TaskRecord {
  const next: TaskRecord = { ...r, lastUpdatedAt: now };
  delete next.inputRequests;
  delete next.inputResponses;
  delete next.requestState;
  delete next.statusMessage;
  delete next.params;
  return next;
}

/** A result as the client gets it inlined: the 2025 task key never travels in a 2026 result. */
function withoutRelatedTask(result: McpResult): McpResult {
  if (!isObject(result._meta) || !(META.relatedTask in result._meta)) return result;
  const { [META.relatedTask]: _drop, ...meta } = result._meta;
  return { ...result, _meta: meta };
}

function ok(record: TaskRecord): TaskTransition {
  return { ok: true, record };
}

function refused(type: 'TASK_TERMINAL' | 'INVALID_PARAMS', message: string): TaskTransition {
  return { ok: false, refusal: new GatewayError(type, message) };
}
