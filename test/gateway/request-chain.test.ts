/**
 * The request chain as a module: compose's order, and the dispatcher's wrappers around a method
 * handler written here (in process, no upstream): the reply and its error mapping, the request
 * events on every way out (a handler that throws, one that rejects, a stateless request, a view
 * that fails), the catalog a handler is given, a view's rewrite, the rate limits (no wrapper without
 * rules), and the microtask turns the wrappers add to a handler's own.
 */
import { describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import type { RateLimitsConfig } from '../../src/config/schema.js';
import type { RequestContext } from '../../src/contracts/request-context.js';
import type { McpResult } from '../../src/contracts/upstream.js';
import { CatalogManager } from '../../src/gateway/catalog-manager.js';
import type { Catalog } from '../../src/gateway/catalog.js';
import { compose, requestChain, type ResultStep, type Wrapper } from '../../src/gateway/request-chain.js';
import { RequestEvents } from '../../src/gateway/request-events.js';
import type { ServerView } from '../../src/gateway/server-views.js';
import { SessionCatalogs } from '../../src/gateway/session-catalogs.js';
import { GatewayError, UpstreamRpcError, errorObject } from '../../src/jsonrpc/errors.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/jsonrpc/messages.js';
import { StatelessResults } from '../../src/stateless/result-shape.js';
import { DataPathEvents, subscribe } from '../../src/observability/events.js';
import { MemoryCounterStore } from '../../src/rate-limit/counter-store.js';
import { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { GATEWAY_IDENTITY, recordEvents, recordingSink, sessionContext } from '../support/in-process.js';

type Step = (trail: string[]) => Promise<string>;

const SERVER_INFO = { name: 'mcp-gateway', version: 'test' };

const stateless = (scope: string): RequestContext => ({
  protocolVersion: '2026-07-28',
  stateless: true,
  clientCapabilities: {},
  clientInfo: { name: 't', version: '1' },
  scope,
  sink: recordingSink(),
  sessionSink: undefined,
});

let nextId = 1;
const request = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  ...(params ? { params } : {}),
});

/** The chain around `handler`, with the parts it reads; `catalogFor` stands in for a session's own lists. */
function chainOf(
  handler: ResultStep,
  catalogFor?: (ctx: RequestContext) => Catalog | Promise<Catalog>,
  rateLimiter?: RateLimiter,
) {
  const events = recordEvents(['request:start', 'request:end']);
  const catalogs = new CatalogManager({ upstreams: new Map(), probeIdentity: GATEWAY_IDENTITY, log: quietLogger() });
  const errors: unknown[] = [];
  const log = { error: (fields: unknown) => void errors.push(fields) } as unknown as Logger;
  class Sessions extends SessionCatalogs {
    override catalogFor(ctx: RequestContext): Catalog | Promise<Catalog> {
      return catalogFor ? catalogFor(ctx) : super.catalogFor(ctx);
    }
  }
  const sessionCatalogs = new Sessions({
    upstreams: new Map(),
    catalogs,
    log: quietLogger(),
    call: () => Promise.reject(new Error('no workers here')),
    hasWorker: async () => false,
  });
  const chain = requestChain(
    {
      events: new RequestEvents(events.diagnostics, catalogs),
      catalogs,
      sessionCatalogs,
      statelessResults: new StatelessResults({ serverInfo: SERVER_INFO, caching: { listTtlMs: 0, readTtlMs: 0 } }),
      log,
      admissions: rateLimiter ? [rateLimiter] : [],
    },
    handler,
  );
  return { chain, events, catalogs, errors };
}

function quietLogger(): Logger {
  const nop = () => undefined;
  return { error: nop, warn: nop, info: nop, debug: nop } as unknown as Logger;
}

const errorOf = (r: JsonRpcResponse) => ('error' in r ? r.error : undefined);
const resultOf = (r: JsonRpcResponse) => ('result' in r ? (r.result as McpResult) : undefined);

/** Microtask turns until `run`'s promise settles (a turn counted each time the queue comes round). */
async function turns(run: () => Promise<unknown>): Promise<number> {
  let n = 0;
  let settled = false;
  const count = () => {
    if (settled) return;
    n++;
    queueMicrotask(count);
  };
  queueMicrotask(count);
  await run().then(() => {
    settled = true;
  });
  return n;
}

describe('compose', () => {
  it('puts the first wrapper outermost, each around the next, the handler inside them all', async () => {
    const wrap =
      (name: string): Wrapper<Step> =>
      (next) =>
      async (trail) => {
        trail.push(`${name}>`);
        const r = await next(trail);
        trail.push(`<${name}`);
        return `${name}(${r})`;
      };
    const trail: string[] = [];
    const step = compose<Step>(async (t) => (t.push('handler'), 'h'), wrap('a'), wrap('b'), wrap('c'));
    expect(await step(trail)).toBe('a(b(c(h)))');
    expect(trail).toEqual(['a>', 'b>', 'c>', 'handler', '<c', '<b', '<a']);
    expect(compose<Step>(async () => 'alone')).toBeTypeOf('function');
  });
});

describe('the request chain', () => {
  it('publishes request:start before the handler runs and request:end before the reply is out', async () => {
    const order: string[] = [];
    const { chain, events } = chainOf(async () => {
      order.push('handler');
      return { content: [] };
    });
    const stop = subscribe(events.diagnostics.gateway, {
      'request:start': () => void order.push('start'),
      'request:end': () => void order.push('end'),
    });
    const reply = await chain(sessionContext('order'), request('ping'), undefined, undefined);
    order.push('reply');
    stop();
    expect(reply).toEqual({ jsonrpc: '2.0', id: reply.id, result: { content: [] } });
    expect(order).toEqual(['start', 'handler', 'end', 'reply']);
    events.stop();
  });

  it('maps a thrown error once, to the table’s reply, and ends the request with its type', async () => {
    const thrown = new GatewayError('INVALID_PARAMS', 'params.name must be a string');
    // Not async: a handler may throw instead of rejecting.
    const { chain, events, errors } = chainOf(() => {
      throw thrown;
    });
    const r = request('tools/call', { name: 'x' });
    expect(await chain(sessionContext('throws'), r, undefined, undefined)).toEqual({
      jsonrpc: '2.0',
      id: r.id,
      error: thrown.toJsonRpc(),
    });
    expect(events.of('request:end')).toEqual([
      expect.objectContaining({
        method: 'tools/call',
        errorType: 'INVALID_PARAMS',
        errorCode: String(errorObject('INVALID_PARAMS').code),
      }),
    ]);
    // The table's own errors are no bug.
    expect(errors).toEqual([]);
    events.stop();
  });

  it('passes an upstream’s own error through as it came; anything else is INTERNAL_ERROR, logged once', async () => {
    const upstream = { code: -32099, message: 'upstream says no', data: { why: 'because' } };
    const { chain: passes, events: e1 } = chainOf(async () => Promise.reject(new UpstreamRpcError(upstream)));
    expect(errorOf(await passes(sessionContext('up'), request('prompts/get'), undefined, undefined))).toEqual(upstream);
    expect(e1.of('request:end')).toEqual([expect.objectContaining({ errorType: '-32099', errorCode: '-32099' })]);
    e1.stop();

    const {
      chain: breaks,
      events: e2,
      errors,
    } = chainOf(async () => {
      throw new TypeError('a bug');
    });
    const reply = await breaks(sessionContext('bug'), request('prompts/get'), undefined, undefined);
    expect(errorOf(reply)).toEqual(errorObject('INTERNAL_ERROR'));
    expect(errors).toHaveLength(1);
    const internal = String(errorObject('INTERNAL_ERROR').code);
    expect(e2.of('request:end')).toEqual([expect.objectContaining({ errorType: internal, errorCode: internal })]);
    e2.stop();
  });

  it('shapes a stateless request’s result and ends it as stateless, thrown or answered', async () => {
    let fail = false;
    const { chain, events } = chainOf(async () => {
      if (fail) throw new GatewayError('MODERN_METHOD_NOT_FOUND', 'Method not found: tasks/get');
      return { content: [{ type: 'text', text: 'modern' }], isError: true };
    });
    const answered = await chain(stateless('req-1'), request('tools/call', { name: 't' }), undefined, undefined);
    expect(resultOf(answered)).toMatchObject({
      resultType: 'complete',
      content: [{ text: 'modern' }],
      _meta: expect.objectContaining({}),
    });
    fail = true;
    const thrown = await chain(stateless('req-2'), request('tasks/get'), undefined, undefined);
    expect(errorOf(thrown)?.code).toBe(errorObject('MODERN_METHOD_NOT_FOUND').code);
    expect(events.of('request:end')).toEqual([
      expect.objectContaining({ scope: 'req-1', stateless: true, errorType: '', toolError: true }),
      expect.objectContaining({ scope: 'req-2', stateless: true, errorType: 'MODERN_METHOD_NOT_FOUND' }),
    ]);
    // A stateless request has no session to name.
    expect(events.of('request:start').map((s) => s.sessionId)).toEqual([undefined, undefined]);
    events.stop();
  });

  it('gives the handler the request as a view rewrote it, and ends it so; a view that fails still ends it', async () => {
    const seen: JsonRpcRequest[] = [];
    const { chain, events } = chainOf(async (_ctx, r) => {
      seen.push(r);
      return {};
    });
    let refuse = false;
    const view = {
      exposedTool: (name: string) => `echo__${name}`,
      rewrite: (_ctx: RequestContext, r: JsonRpcRequest) => {
        if (refuse) throw new GatewayError('INVALID_PARAMS', 'Unknown tool: hidden');
        return { ...r, params: { ...r.params, name: `echo__${String(r.params?.name)}` } };
      },
    } as unknown as ServerView;
    await chain(sessionContext('view'), request('tools/call', { name: 'echo' }), view, undefined);
    expect(seen.map((r) => r.params?.name)).toEqual(['echo__echo']);
    refuse = true;
    const refused = await chain(sessionContext('view'), request('tools/call', { name: 'hidden' }), view, undefined);
    expect(errorOf(refused)?.code).toBe(errorObject('INVALID_PARAMS').code);
    expect(seen).toHaveLength(1);
    expect(events.of('request:end')).toEqual([
      expect.objectContaining({ target: 'echo__echo', errorType: '' }),
      expect.objectContaining({ target: 'hidden', errorType: 'INVALID_PARAMS' }),
    ]);
    events.stop();
  });

  it('gives a catalog method the catalog its session reads, found later or at once, and others the shared one', async () => {
    const own = { own: true } as unknown as Catalog;
    const given: unknown[] = [];
    let pending = true;
    const { chain, catalogs, events } = chainOf(
      async (_ctx, _r, _view, catalog) => (given.push(catalog), {}),
      () => (pending ? Promise.resolve(own) : own),
    );
    await chain(sessionContext('c'), request('tools/list'), undefined, undefined);
    pending = false;
    await chain(sessionContext('c'), request('tools/list'), undefined, undefined);
    await chain(sessionContext('c'), request('ping'), undefined, undefined);
    expect(given).toEqual([own, own, catalogs.catalog]);
    expect(given[2]).not.toBe(own);
    // The session's catalog failing is the request's failure, published like any other.
    const failing = chainOf(
      async () => ({}),
      () => Promise.reject(new GatewayError('UPSTREAM_UNAVAILABLE', 'worker did not start')),
    );
    const r = await failing.chain(sessionContext('c'), request('tools/list'), undefined, undefined);
    expect(errorOf(r)?.code).toBe(errorObject('UPSTREAM_UNAVAILABLE').code);
    expect(failing.events.of('request:end')).toEqual([expect.objectContaining({ errorType: 'UPSTREAM_UNAVAILABLE' })]);
    failing.events.stop();
    events.stop();
  });

  it('adds two microtask turns to a handler’s own, 2025 or stateless, with its catalog known at once', async () => {
    const answered = Promise.resolve<McpResult>({ content: [] });
    const handler: ResultStep = () => answered;
    const { chain, events } = chainOf(handler);
    const own = await turns(() => handler(sessionContext('t'), request('ping'), undefined, {} as Catalog));
    expect(await turns(() => chain(sessionContext('t'), request('tools/list'), undefined, undefined))).toBe(own + 2);
    expect(await turns(() => chain(stateless('t'), request('tools/call', { name: 'x' }), undefined, undefined))).toBe(
      own + 2,
    );
    expect(await turns(() => chain(sessionContext('t'), request('ping'), undefined, undefined))).toBe(own + 2);
    events.stop();
  });

  it('rate limits: no wrapper without rules; a memory store adds no turn; a refusal is the typed reply', async () => {
    const answered = Promise.resolve<McpResult>({ content: [] });
    const handler: ResultStep = () => answered;
    const limiter = (rules: Array<Record<string, unknown>>) => {
      const config = { rules, onStoreError: 'allow', storeTimeoutMs: 250 } as RateLimitsConfig;
      return new RateLimiter(config, new MemoryCounterStore(), new DataPathEvents('chain-test'), quietLogger());
    };
    const admits: string[] = [];
    const none = limiter([]);
    none.admit = () => void admits.push('called');
    const off = chainOf(handler, undefined, none);
    const own = await turns(() => handler(sessionContext('t'), request('ping'), undefined, {} as Catalog));
    expect(await turns(() => off.chain(sessionContext('t'), request('ping'), undefined, undefined))).toBe(own + 2);
    expect(admits).toEqual([]); // composed without it: not even asked
    const rule = { name: 'two', key: 'global', limit: 2, windowMs: 60000, burst: 0 };
    const on = chainOf(handler, undefined, limiter([rule]));
    expect(await turns(() => on.chain(sessionContext('t'), request('ping'), undefined, undefined))).toBe(own + 2);
    expect(resultOf(await on.chain(sessionContext('t'), request('ping'), undefined, undefined))).toBeDefined();
    const refused = errorOf(await on.chain(sessionContext('t'), request('ping'), undefined, undefined));
    expect(refused).toMatchObject({ code: -32015, data: { type: 'RATE_LIMITED', rule: 'two', retryable: true } });
    off.events.stop();
    on.events.stop();
  });
});
