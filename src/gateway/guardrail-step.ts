// Guardrails on the request chain (config `interceptors`; the chains and their order:
// guardrails/chains.ts): the innermost wrapper, so it sees what the upstream will get (after a
// view's fixed arguments and renames) and what it answered. A call's arguments are checked before
// they go upstream; a result before the client sees it. Blocked: GUARDRAIL_BLOCKED naming the
// interceptor and the kinds found, never the text. Without interceptors, a guarded request costs
// its route's lookup and two map reads here; any other request, one.
import { isObject, type JsonRpcRequest } from '../jsonrpc/messages.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { GUARDED_ASKS, NO_CHAIN, whoOf, type Chain, type Guardrails } from '../guardrails/chains.js';
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

/** The task methods that hand a client a task's result (2025-11-25's tasks/result, 2026-07-28's tasks/get). */
const TASK_READS: ReadonlySet<string> = new Set(['tasks/result', 'tasks/get']);

/**
 * A task's call ended (the gateway's own task): its result through the response phase of the top
 * level's, its endpoint's (the virtual server it was made through: `ctx.endpoint`, kept in its
 * record) and its upstream's lists, as a tools/call result, before it is stored; so every read of
 * it (tasks/result, tasks/get, notifications/tasks, on any replica) gets what passed. A block fails
 * the task with GUARDRAIL_BLOCKED.
 */
export async function guardedTaskResult(
  guardrails: Guardrails | undefined,
  ctx: RequestContext,
  upstream: string | undefined,
  result: McpResult,
): Promise<McpResult> {
  if (!guardrails || isInterim(result)) return result;
  const chain = guardrails.callChain(guardrails.endpointList(ctx.endpoint), upstream);
  if (chain.response.length === 0) return result;
  return (await guardrails.run(chain.response, 'response', 'tools/call', whoOf(ctx), result)) as McpResult;
}

/**
 * What an upstream's own task (passed through) answered a read with: tasks/result's is the
 * tools/call result itself; tasks/get's (2026-07-28) inlines it as `result`, and the upstream's
 * asks as `inputRequests`, each checked as an ask.
 */
async function guardedTaskRead(
  guardrails: Guardrails,
  chain: Chain,
  asks: () => Chain,
  ctx: RequestContext,
  method: string,
  read: McpResult,
): Promise<McpResult> {
  const who = whoOf(ctx);
  const response = (value: unknown) => guardrails.run(chain.response, 'response', 'tools/call', who, value);
  if (method === 'tasks/result') return (await response(read)) as McpResult;
  const out: McpResult = { ...read };
  if (isObject(read.result)) out.result = await response(read.result);
  if (isObject(read.inputRequests)) {
    const askChain = asks();
    const inputRequests: Record<string, unknown> = {};
    for (const [key, req] of Object.entries(read.inputRequests)) {
      const ask = isObject(req) && typeof req.method === 'string' && GUARDED_ASKS.has(req.method) ? req : undefined;
      inputRequests[key] =
        ask && isObject(ask.params)
          ? { ...ask, params: await guardrails.askRequest(askChain, who, String(ask.method), ask.params) }
          : req;
    }
    out.inputRequests = inputRequests;
  }
  return out;
}

export interface GuardrailStepParts {
  /** The upstream of an upstream's own task (a wrapped id); undefined for the gateway's own (checked as they end). */
  passedThrough?: (ctx: RequestContext, taskId: unknown) => string | undefined;
}

export function guardrailStep(guardrails: Guardrails, parts: GuardrailStepParts = {}): Wrapper<ResultStep> {
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
    const taskRead = async (upstream: string, ...[ctx, req, view, catalog]: Parameters<ResultStep>) => {
      const read = await next(ctx, req, view, catalog);
      const endpoint = view?.config.interceptors;
      const chain = guardrails.callChain(endpoint, upstream);
      const asks = () => guardrails.askChain(endpoint, upstream);
      return chain === NO_CHAIN ? read : guardedTaskRead(guardrails, chain, asks, ctx, req.method, read);
    };
    return (ctx, req, view, catalog) => {
      if (TASK_READS.has(req.method)) {
        const upstream = parts.passedThrough?.(ctx, req.params?.taskId);
        return upstream === undefined ? next(ctx, req, view, catalog) : taskRead(upstream, ctx, req, view, catalog);
      }
      const chain = GUARDED.has(req.method)
        ? guardrails.callChain(view?.config.interceptors, upstreamOf(req, catalog))
        : NO_CHAIN;
      return chain === NO_CHAIN ? next(ctx, req, view, catalog) : guarded(chain, ctx, req, view, catalog);
    };
  };
}
