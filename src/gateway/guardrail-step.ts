// Guardrails on the request chain (config `interceptors`; the chains and their order:
// guardrails/chains.ts): the innermost wrapper, so it sees what the upstream will get (after a
// view's fixed arguments and renames) and what it answered. A call's arguments are checked before
// they go upstream; a result before the client sees it. Blocked: GUARDRAIL_BLOCKED naming the
// interceptor and the kinds found, never the text. Without interceptors, a guarded request costs
// its route's lookup and two map reads here; any other request, one.
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { NO_CHAIN, whoOf, type Chain, type Guardrails } from '../guardrails/chains.js';
import type { Catalog } from './catalog.js';
import type { ResultStep, Wrapper } from './request-chain.js';

/** The methods guarded, and whether their arguments are (resources/read has only a URI). */
const GUARDED: ReadonlyMap<string, boolean> = new Map([
  ['tools/call', true],
  ['prompts/get', true],
  ['resources/read', false],
]);

/**
 * A result that is not the call's answer: a task made of it (its result is checked as its call
 * ends) or an input_required round (its asks were checked as the upstream made them).
 */
export function isInterim(result: McpResult): boolean {
  return result.resultType === 'input_required' || result.resultType === 'task' || isObject(result.task);
}

/** The upstream a guarded request goes to, as the catalog routes it (after a view's renames). */
function upstreamOf(req: JsonRpcRequest, catalog: Catalog): string | undefined {
  const params = req.params;
  if (req.method === 'resources/read')
    return typeof params?.uri === 'string' ? catalog.resource(params.uri)?.upstream : undefined;
  const name = params?.name;
  if (typeof name !== 'string') return undefined;
  return (req.method === 'tools/call' ? catalog.tool(name) : catalog.prompt(name))?.upstream;
}

export function guardrailStep(guardrails: Guardrails): Wrapper<ResultStep> {
  /** The request phase: a built-in gets the arguments, an interceptor server the whole params. */
  const request = async (chain: Chain, ctx: RequestContext, req: JsonRpcRequest): Promise<JsonRpcRequest> => {
    let params = req.params ?? {};
    const hasArguments = GUARDED.get(req.method) === true;
    const who = whoOf(ctx);
    for (const interceptor of chain.request) {
      if (interceptor.events && !interceptor.events.has(req.method)) continue;
      if (interceptor.takes === 'params') {
        const out = await guardrails.runOne(interceptor, 'request', req.method, who, params);
        // Only a mutator's arguments are taken: a new tool name or URI would step around the view's routing.
        const args = (out as { arguments?: unknown } | null)?.arguments;
        if (out !== params && hasArguments && typeof args === 'object' && args !== null)
          params = { ...params, arguments: args };
      } else if (hasArguments && params.arguments !== undefined) {
        const out = await guardrails.runOne(interceptor, 'request', req.method, who, params.arguments);
        if (out !== params.arguments) params = { ...params, arguments: out };
      }
    }
    return params === (req.params ?? {}) ? req : { ...req, params };
  };
  return (next) => {
    const guarded = async (chain: Chain, ...[ctx, req, view, catalog]: Parameters<ResultStep>) => {
      const sent = chain.request.length > 0 ? await request(chain, ctx, req) : req;
      const result = await next(ctx, sent, view, catalog);
      if (chain.response.length === 0 || isInterim(result)) return result;
      return (await guardrails.run(chain.response, 'response', req.method, whoOf(ctx), result)) as McpResult;
    };
    return (ctx, req, view, catalog) => {
      const chain = GUARDED.has(req.method)
        ? guardrails.callChain(view?.config.interceptors, upstreamOf(req, catalog))
        : NO_CHAIN;
      return chain === NO_CHAIN ? next(ctx, req, view, catalog) : guarded(chain, ctx, req, view, catalog);
    };
  };
}
