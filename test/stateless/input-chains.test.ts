/**
 * InputChains as a module: a stateless (2026-07-28) request whose call runs on a worker of its
 * own (a real stdio child process, the asking server) that asks its client an elicitation. The
 * chain host is the seam the module takes: here a small one that hands the worker's question out
 * under a gateway id and the client's answer back, and records what the chain tells it (yielded,
 * released). Rounds and the signed requestState (altered, stale, for another tool or principal),
 * a capability the client did not declare, a retry that never comes, and shutdown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/contracts/request-context.js';
import type { McpResult } from '../../src/contracts/upstream.js';
import { GatewayError } from '../../src/jsonrpc/errors.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/messages.js';
import {
  InputChains,
  chainScopeOf,
  isChainScope,
  newChainScope,
  type ChainHost,
} from '../../src/stateless/input-chains.js';
import { DataPathEvents } from '../../src/observability/events.js';
import { LogThrottle } from '../../src/observability/log-throttle.js';
import { StdioUpstream } from '../../src/upstream/wires/stdio.js';
import { askingUpstream } from '../support/asking-server.js';
import { GATEWAY_IDENTITY, quietLog, recordingSink, stdioConfig } from '../support/in-process.js';
import { until } from '../support/wait.js';

const log = quietLog();
const config = stdioConfig(askingUpstream('ask', { mode: 'shared' }));
const workers: StdioUpstream[] = [];

/** The host's side: questions out under gateway ids, answers back; what the chain said of each scope. */
interface Host extends ChainHost {
  readonly asked: Array<{ scope: string; id: string; method: string }>;
  readonly yields: Array<[string, boolean]>;
  readonly released: string[];
}

function host(): Host {
  const pending = new Map<string, (result: McpResult) => void>();
  let next = 1;
  const h: Host = {
    asked: [],
    yields: [],
    released: [],
    ask: (scope, deliver, method, params, signal) => {
      const id = `gw-${next++}`;
      h.asked.push({ scope, id, method });
      const answered = new Promise<McpResult>((resolve, reject) => {
        pending.set(id, resolve);
        signal?.addEventListener('abort', () => reject(new Error('withdrawn')), { once: true });
      });
      deliver({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) } as JsonRpcMessage);
      return answered;
    },
    answer: (_scope, response) => {
      if ('result' in response) pending.get(String(response.id))?.(response.result as McpResult);
    },
    release: (scope) => void h.released.push(scope),
    yielded: (scope, yielded) => void h.yields.push([scope, yielded]),
  };
  return h;
}

/** A stateless request's context in a chain scope of its own. */
function chainContext(overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    protocolVersion: '2026-07-28',
    stateless: true,
    clientCapabilities: { elicitation: {} },
    clientInfo: { name: 'chain-test', version: '1' },
    scope: newChainScope(),
    sink: recordingSink(),
    sessionSink: undefined,
    ...overrides,
  };
}

/** Runs `ask_then_work` as a chain on a worker of its own (its questions go to `chains`). */
async function startChain(chains: InputChains, ctx: RequestContext, params = CALL) {
  const peer = {
    request: (method: string, p: Record<string, unknown> | undefined, signal?: AbortSignal) =>
      chains.ask(ctx.scope, method, p, signal),
    notification: () => undefined,
  };
  const worker = new StdioUpstream(config, GATEWAY_IDENTITY, log, workers.length, peer, {
    diagnostics: new DataPathEvents('input-chains'),
    throttle: new LogThrottle(),
  });
  workers.push(worker);
  await worker.start();
  return chains.run(ctx, 'tools/call', params, undefined, (options) => worker.call('tools/call', params, options));
}

const CALL = { name: 'ask_then_work', arguments: {} };
const ANSWER = { action: 'accept', content: { name: 'Ada' } };
const text = (r: McpResult) => (r.content as Array<{ text: string }>)[0]!.text;

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

describe('InputChains', () => {
  it("answers a worker's question as input_required; the retry with the answer continues the same call", async () => {
    const h = host();
    const chains = new InputChains(h, 30_000);
    const ctx = chainContext();
    const round = await (await startChain(chains, ctx)).promise;
    expect(round).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'gw-1': { method: 'elicitation/create', params: { message: 'Who?' } } },
    });
    expect(isChainScope(ctx.scope)).toBe(true);
    expect(chainScopeOf(round.requestState)).toBe(ctx.scope);
    expect(h.yields).toEqual([[ctx.scope, true]]);
    expect(chains.size).toBe(1);
    const retry = chains.resume(
      { ...ctx, sink: recordingSink() },
      { ...CALL, inputResponses: { 'gw-1': ANSWER }, requestState: round.requestState },
      undefined,
    );
    expect(text(await retry.promise)).toBe('worked for {"name":"Ada"}');
    expect(h.yields).toEqual([
      [ctx.scope, true],
      [ctx.scope, false],
    ]);
    expect(h.released).toEqual([ctx.scope]);
    expect(chains.size).toBe(0);
  });

  it('refuses a requestState that was altered or names another tool; the chain still waits for the right one', async () => {
    const h = host();
    const chains = new InputChains(h, 30_000);
    const ctx = chainContext();
    const { requestState } = await (await startChain(chains, ctx)).promise;
    const state = String(requestState);
    const altered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
    const answers = { inputResponses: { 'gw-1': ANSWER } };
    await expect(
      chains.resume(ctx, { ...CALL, ...answers, requestState: altered }, undefined).promise,
    ).rejects.toMatchObject({ type: 'INVALID_PARAMS' });
    await expect(
      chains.resume(ctx, { ...CALL, name: 'hello', ...answers, requestState: state }, undefined).promise,
    ).rejects.toMatchObject({ type: 'INVALID_PARAMS' });
    expect(h.released).toEqual([]);
    expect(text(await chains.resume(ctx, { ...CALL, ...answers, requestState: state }, undefined).promise)).toBe(
      'worked for {"name":"Ada"}',
    );
    // The chain has ended: its last state names nothing any more, and the scope is let go again.
    await expect(
      chains.resume(ctx, { ...CALL, ...answers, requestState: state }, undefined).promise,
    ).rejects.toMatchObject({ type: 'INVALID_PARAMS' });
    expect(h.released).toEqual([ctx.scope, ctx.scope]);
  });

  it('a retry without the answers asks again under a new state; the earlier state is stale, a second retry at once is refused', async () => {
    const h = host();
    const chains = new InputChains(h, 30_000);
    const ctx = chainContext();
    const first = await (await startChain(chains, ctx)).promise;
    const again = chains.resume(ctx, { ...CALL, requestState: first.requestState }, undefined);
    await expect(
      chains.resume(ctx, { ...CALL, requestState: first.requestState }, undefined).promise,
    ).rejects.toMatchObject({ type: 'INVALID_REQUEST' });
    const second = await again.promise;
    expect(second).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'gw-1': { method: 'elicitation/create' } },
    });
    expect(second.requestState).not.toBe(first.requestState);
    await expect(
      chains.resume(ctx, { ...CALL, inputResponses: { 'gw-1': ANSWER }, requestState: first.requestState }, undefined)
        .promise,
    ).rejects.toMatchObject({ type: 'INVALID_PARAMS' });
    const done = chains.resume(
      ctx,
      { ...CALL, inputResponses: { 'gw-1': ANSWER }, requestState: second.requestState },
      undefined,
    );
    expect(text(await done.promise)).toBe('worked for {"name":"Ada"}');
  });

  it('only the principal that started a chain may continue it', async () => {
    const h = host();
    const chains = new InputChains(h, 30_000);
    const ctx = chainContext({ principal: 'alice' });
    const { requestState } = await (await startChain(chains, ctx)).promise;
    const params = { ...CALL, inputResponses: { 'gw-1': ANSWER }, requestState };
    await expect(chains.resume({ ...ctx, principal: 'mallory' }, params, undefined).promise).rejects.toMatchObject({
      type: 'INVALID_PARAMS',
    });
    await expect(chains.resume({ ...ctx, principal: undefined }, params, undefined).promise).rejects.toMatchObject({
      type: 'INVALID_PARAMS',
    });
    expect(text(await chains.resume(ctx, params, undefined).promise)).toBe('worked for {"name":"Ada"}');
  });

  it('a question the client declared no capability for fails the request with -32021 naming it, and ends the chain', async () => {
    const h = host();
    const chains = new InputChains(h, 30_000);
    const ctx = chainContext({ clientCapabilities: {} });
    const failure = await (await startChain(chains, ctx)).promise.catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({
      type: 'MISSING_CLIENT_CAPABILITY',
      detail: { requiredCapabilities: { elicitation: {} } },
    });
    expect(h.asked).toEqual([]);
    expect(h.released).toEqual([ctx.scope]);
    expect(chains.size).toBe(0);
  });

  it('a chain whose retry does not come within waitMs is cancelled and let go', async () => {
    const h = host();
    const chains = new InputChains(h, 100);
    const ctx = chainContext();
    const { requestState } = await (await startChain(chains, ctx)).promise;
    await until('the chain was let go', () => h.released.includes(ctx.scope));
    expect(chains.size).toBe(0);
    await expect(
      chains.resume(ctx, { ...CALL, inputResponses: { 'gw-1': ANSWER }, requestState }, undefined).promise,
    ).rejects.toMatchObject({ type: 'INVALID_PARAMS' });
  });

  it('closeAll() ends every chain with the error given, the open round too', async () => {
    const h = host();
    const chains = new InputChains(h, 30_000);
    const ctx = chainContext();
    const { requestState } = await (await startChain(chains, ctx)).promise;
    const waiting = chains.resume(ctx, { ...CALL, requestState }, undefined);
    chains.closeAll(new GatewayError('SHUTTING_DOWN'));
    await expect(waiting.promise).rejects.toMatchObject({ type: 'SHUTTING_DOWN' });
    expect(h.released).toEqual([ctx.scope]);
    expect(chains.size).toBe(0);
  });

  it('chainScopeOf reads the scope of a state it did not sign, and nothing of what is no state', () => {
    const scope = newChainScope();
    const body = Buffer.from(JSON.stringify({ s: scope, m: 'tools/call', d: 'x', n: 1 })).toString('base64url');
    expect(chainScopeOf(`${body}.anything`)).toBe(scope);
    expect(
      chainScopeOf(`${Buffer.from(JSON.stringify({ s: 'not-a-chain' })).toString('base64url')}.x`),
    ).toBeUndefined();
    for (const bad of [undefined, 42, '', 'nodot', '.x', '!!!.x']) expect(chainScopeOf(bad)).toBeUndefined();
    expect(isChainScope('session-id')).toBe(false);
  });
});
