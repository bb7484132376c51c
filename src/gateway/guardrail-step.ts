// Guardrails on the request chain (config `interceptors`, top level then the virtual server's):
// the innermost wrapper, so it sees what the upstream will get (after a view's fixed arguments
// and renames) and what it answered. A call's arguments are checked before they go upstream; a
// result before the client sees it. Blocked: GUARDRAIL_BLOCKED naming the interceptor and the
// kinds found, never the text. Without interceptors, a request costs one comparison here.
import type { InterceptorConfig } from '../config/interceptors.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import { builtinInterceptor, type Interceptor, type Phase } from '../guardrails/builtin-interceptors.js';
import type { ResultStep, Wrapper } from './request-chain.js';
import type { ServerView } from './server-views.js';

/** The methods guarded, and whether their arguments are (resources/read has only a URI). */
const GUARDED: ReadonlyMap<string, boolean> = new Map([
  ['tools/call', true],
  ['prompts/get', true],
  ['resources/read', false],
]);

interface Compiled {
  request: readonly Interceptor[];
  response: readonly Interceptor[];
}

const NONE: Compiled = { request: [], response: [] };

function compile(configs: readonly InterceptorConfig[] | undefined): Compiled {
  const on = (configs ?? []).filter((c) => c.mode !== 'off');
  const phase = (p: Phase) =>
    on
      .filter((c) => (c.phases ?? ['request', 'response']).includes(p) && (p === 'response' || c.name !== 'size'))
      .map(builtinInterceptor);
  return on.length === 0 ? NONE : { request: phase('request'), response: phase('response') };
}

export function guardrailStep(
  topLevel: readonly InterceptorConfig[] | undefined,
  diagnostics: DataPathEvents,
): Wrapper<ResultStep> {
  const main = compile(topLevel);
  // A virtual server's list, compiled once per config (a reload makes a new one).
  const byView = new WeakMap<object, Compiled>();
  const chainFor = (view: ServerView | undefined): Compiled => {
    const own = view?.config.interceptors;
    if (!own || own.length === 0) return main;
    let compiled = byView.get(own);
    if (!compiled) {
      const mine = compile(own);
      compiled = { request: [...main.request, ...mine.request], response: [...main.response, ...mine.response] };
      byView.set(own, compiled);
    }
    return compiled;
  };
  const run = (
    interceptors: readonly Interceptor[],
    phase: Phase,
    method: string,
    ctx: RequestContext,
    value: unknown,
  ) => {
    for (const interceptor of interceptors) {
      const started = performance.now();
      const outcome = interceptor.run(value, phase);
      diagnostics.emit('guardrail:verdict', {
        interceptor: interceptor.name,
        phase,
        method,
        verdict: outcome.verdict,
        kinds: outcome.kinds,
        seconds: (performance.now() - started) / 1000,
        requestId: ctx.http?.requestId,
        principal: ctx.principal,
      });
      if (outcome.verdict === 'blocked')
        throw new GatewayError('GUARDRAIL_BLOCKED', `Refused by the ${interceptor.name} guardrail (${phase})`, {
          interceptor: interceptor.name,
          phase,
          kinds: outcome.kinds,
        });
      value = outcome.value;
    }
    return value;
  };
  return (next) => {
    const guarded = async (chain: Compiled, ...[ctx, request, view, catalog]: Parameters<ResultStep>) => {
      let sent: JsonRpcRequest = request;
      const params = request.params;
      if (GUARDED.get(request.method) && chain.request.length > 0 && params?.arguments !== undefined) {
        const checked = run(chain.request, 'request', request.method, ctx, params.arguments);
        if (checked !== params.arguments) sent = { ...request, params: { ...params, arguments: checked } };
      }
      const result = await next(ctx, sent, view, catalog);
      return chain.response.length === 0
        ? result
        : (run(chain.response, 'response', request.method, ctx, result) as McpResult);
    };
    return (ctx, request, view, catalog) => {
      const chain = GUARDED.has(request.method) ? chainFor(view) : NONE;
      return chain === NONE ? next(ctx, request, view, catalog) : guarded(chain, ctx, request, view, catalog);
    };
  };
}
