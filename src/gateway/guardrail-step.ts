// Guardrails on the request chain (config `interceptors`, top level then the virtual server's):
// the innermost wrapper, so it sees what the upstream will get (after a view's fixed arguments
// and renames) and what it answered. A call's arguments are checked before they go upstream; a
// result before the client sees it. Blocked: GUARDRAIL_BLOCKED naming the interceptor and the
// kinds found, never the text. Without interceptors, a request costs one comparison here.
import type { Logger } from 'pino';
import { isServerEntry, type InterceptorConfig } from '../config/interceptors.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { ClientIdentity, McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import { LATEST_VERSION } from '../jsonrpc/versions.js';
import type { DataPathEvents } from '../observability/events.js';
import { builtinInterceptor, type Interceptor, type Phase } from '../guardrails/builtin-interceptors.js';
import { InterceptorServer } from '../guardrails/interceptor-server.js';
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

export interface GuardrailDeps {
  diagnostics: DataPathEvents;
  log: Logger;
}

/** Who the gateway is to an interceptor server: a client that offers it nothing to ask. */
const INTERCEPTOR_CLIENT: ClientIdentity = {
  clientInfo: { name: 'mcp-gateway-interceptors', version: '1' },
  capabilities: {},
  protocolVersion: LATEST_VERSION,
};

/** The guardrails' wrapper, and the end of the interceptor servers it connected to. */
export type GuardrailStep = Wrapper<ResultStep> & { close(): Promise<void> };

/** Compiles lists of entries into chains; one connection per server entry, however many chains it is in. */
function chainCompiler(deps: GuardrailDeps) {
  const { diagnostics, log } = deps;
  // Keyed by what the entry says: a reload that keeps an entry keeps its connection. One a reload
  // dropped stays in the map, its connection closed once idle (InterceptorServer), until shutdown.
  const servers = new Map<string, InterceptorServer>();
  const interceptorOf = (c: InterceptorConfig): Interceptor => {
    if (!isServerEntry(c)) return builtinInterceptor(c);
    const key = JSON.stringify(c);
    let server = servers.get(key);
    if (!server)
      servers.set(key, (server = new InterceptorServer(c, { diagnostics, log, identity: INTERCEPTOR_CLIENT })));
    return server;
  };
  const compile = (configs: readonly InterceptorConfig[] | undefined): Compiled => {
    const on = (configs ?? []).filter((c) => c.mode !== 'off');
    const phase = (p: Phase) =>
      on
        .filter(
          (c) =>
            isServerEntry(c) ||
            ((c.phases ?? ['request', 'response']).includes(p) && (p === 'response' || c.name !== 'size')),
        )
        .map(interceptorOf);
    return on.length === 0 ? NONE : { request: phase('request'), response: phase('response') };
  };
  const close = async () => {
    await Promise.all([...servers.values()].map((s) => s.close()));
  };
  return { compile, close };
}

export function guardrailStep(topLevel: readonly InterceptorConfig[] | undefined, deps: GuardrailDeps): GuardrailStep {
  const { diagnostics } = deps;
  const { compile, close } = chainCompiler(deps);
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
  const runOne = async (
    interceptor: Interceptor,
    phase: Phase,
    method: string,
    ctx: RequestContext,
    value: unknown,
  ) => {
    const started = performance.now();
    const facts = { method, principal: ctx.principal, requestId: ctx.http?.requestId };
    const outcome = await interceptor.run(value, phase, facts);
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
    return outcome.value;
  };
  /** The request phase: a built-in gets the arguments, an interceptor server the whole params. */
  const request = async (chain: Compiled, ctx: RequestContext, req: JsonRpcRequest): Promise<JsonRpcRequest> => {
    let params = req.params ?? {};
    const hasArguments = GUARDED.get(req.method) === true;
    for (const interceptor of chain.request) {
      if (interceptor.events && !interceptor.events.has(req.method)) continue;
      if (interceptor.takes === 'params') {
        const out = await runOne(interceptor, 'request', req.method, ctx, params);
        // Only a mutator's arguments are taken: a new tool name or URI would step around the view's routing.
        const args = (out as { arguments?: unknown } | null)?.arguments;
        if (out !== params && hasArguments && typeof args === 'object' && args !== null)
          params = { ...params, arguments: args };
      } else if (hasArguments && params.arguments !== undefined) {
        const out = await runOne(interceptor, 'request', req.method, ctx, params.arguments);
        if (out !== params.arguments) params = { ...params, arguments: out };
      }
    }
    return params === (req.params ?? {}) ? req : { ...req, params };
  };
  const response = async (chain: Compiled, ctx: RequestContext, method: string, result: McpResult) => {
    let value: unknown = result;
    for (const interceptor of chain.response) {
      if (interceptor.events && !interceptor.events.has(method)) continue;
      const out = await runOne(interceptor, 'response', method, ctx, value);
      if (typeof out === 'object' && out !== null) value = out;
    }
    return value as McpResult;
  };
  const wrapper: Wrapper<ResultStep> = (next) => {
    const guarded = async (chain: Compiled, ...[ctx, req, view, catalog]: Parameters<ResultStep>) => {
      const sent = chain.request.length > 0 ? await request(chain, ctx, req) : req;
      const result = await next(ctx, sent, view, catalog);
      return chain.response.length === 0 ? result : response(chain, ctx, req.method, result);
    };
    return (ctx, req, view, catalog) => {
      const chain = GUARDED.has(req.method) ? chainFor(view) : NONE;
      return chain === NONE ? next(ctx, req, view, catalog) : guarded(chain, ctx, req, view, catalog);
    };
  };
  return Object.assign(wrapper, { close });
}
