/**
 * The runtime helpers of contracts/ (the rest of the folder is types): DeferredCall, a call that
 * waits for a worker and becomes that worker's call once dispatched; failedCall; the request
 * keys cancellation looks calls up by; SubjectToken, which shows nothing when printed; the task
 * store's shared constants and bound errors. The inner call a DeferredCall is given is the
 * UpstreamCall interface it takes, made here.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DeferredCall, failedCall } from '../../src/contracts/deferred-call.js';
import { SubjectToken, requestKey } from '../../src/contracts/request-context.js';
import { LIVE, TERMINAL, recordBytes, taskLimit } from '../../src/contracts/task-store.js';
import type { McpResult, UpstreamCall } from '../../src/contracts/upstream.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';

/** An inner call that settles when the test says, and records cancels. */
function innerCall(): UpstreamCall & { resolve(r: McpResult): void; cancelled: Error[] } {
  let resolve!: (r: McpResult) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<McpResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const cancelled: Error[] = [];
  return { promise, resolve, cancelled, cancel: (e) => (cancelled.push(e), reject(e)) };
}

describe('DeferredCall', () => {
  it('waits until dispatched, then settles as its inner call does', async () => {
    const abandoned: DeferredCall[] = [];
    const call = new DeferredCall('tools/call', { name: 'x' }, undefined, (c) => abandoned.push(c));
    expect(call.waiting).toBe(true);
    const inner = innerCall();
    call.dispatch(inner);
    expect(call.waiting).toBe(false);
    inner.resolve({ ok: true });
    expect(await call.promise).toEqual({ ok: true });
    expect(abandoned).toEqual([]);
  });

  it('cancelled while waiting: abandoned (out of its queue) and failed, never dispatched', async () => {
    const abandoned: DeferredCall[] = [];
    const call = new DeferredCall('tools/call', undefined, undefined, (c) => abandoned.push(c));
    const error = new GatewayError('REQUEST_CANCELLED');
    call.cancel(error);
    await expect(call.promise).rejects.toBe(error);
    expect(abandoned).toEqual([call]);
    expect(call.waiting).toBe(false);
    // A later failure (its queue timer) changes nothing.
    call.fail(new Error('late'));
    await expect(call.promise).rejects.toBe(error);
  });

  it('cancelled once dispatched: the cancel goes to the inner call', async () => {
    const abandoned: DeferredCall[] = [];
    const call = new DeferredCall('tools/call', undefined, undefined, (c) => abandoned.push(c));
    const inner = innerCall();
    call.dispatch(inner);
    const error = new GatewayError('REQUEST_CANCELLED');
    call.cancel(error);
    expect(inner.cancelled).toEqual([error]);
    await expect(call.promise).rejects.toBe(error);
    expect(abandoned).toEqual([]);
  });

  it('fail() stops its timer: a queue timeout no longer fires', async () => {
    const call = new DeferredCall('tools/call', undefined, undefined, () => undefined);
    let fired = false;
    call.timer = setTimeout(() => (fired = true), 0);
    call.fail(new Error('gone'));
    await expect(call.promise).rejects.toThrow('gone');
    await new Promise((r) => setTimeout(r, 5));
    expect(fired).toBe(false);
  });
});

describe('failedCall', () => {
  it('is a call already failed with the error; cancelling it does nothing', async () => {
    const error = new GatewayError('SHUTTING_DOWN');
    const call = failedCall(error);
    call.cancel(new Error('other'));
    await expect(call.promise).rejects.toBe(error);
  });
});

describe('requestKey', () => {
  it('tells scopes apart, and a number id from the same digits as a string', () => {
    const keys = [
      requestKey('s1', 1),
      requestKey('s1', '1'),
      requestKey('s2', 1),
      requestKey('s1', 'n1'),
      requestKey('s1\u0000n', 1),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(requestKey('s1', 7)).toBe(requestKey('s1', 7));
  });
});

describe('SubjectToken', () => {
  it('reveals the token only when asked; printed, logged or serialized it shows nothing', () => {
    const token = new SubjectToken('secret-token-value');
    expect(token.reveal()).toBe('secret-token-value');
    for (const shown of [
      JSON.stringify({ token }),
      String(token),
      `${token}`,
      inspect(token),
      inspect({ nested: { token } }),
    ]) {
      expect(shown).not.toContain('secret-token-value');
    }
    expect(JSON.stringify({ token })).toBe('{"token":"[redacted]"}');
  });
});

describe('task store helpers', () => {
  it('live and terminal statuses do not overlap', () => {
    expect(LIVE.filter((s) => TERMINAL.has(s))).toEqual([]);
    expect([...TERMINAL].sort()).toEqual(['cancelled', 'completed', 'failed']);
  });

  it('counts a record in UTF-8 bytes, and names the bound reached', () => {
    expect(recordBytes('{"a":"é"}')).toBe(10);
    expect(taskLimit('maxPerPrincipal', 5)).toMatchObject({ type: 'TASK_LIMIT', detail: { maxPerPrincipal: 5 } });
    expect(taskLimit('maxBytesPerPrincipal', 1024)).toMatchObject({
      type: 'TASK_LIMIT',
      message: expect.stringContaining('tasks.maxBytesPerPrincipal: 1024'),
      detail: { maxBytesPerPrincipal: 1024 },
    });
  });
});
