// The authorization policy on the request chain (authorization.policyFile, policy/): decided
// once per request before routing, outside the virtual server's view and tool search, so a rule
// names a tool as the endpoint shows it and call_tool's real call is decided as a direct one.
// Lists show what the same policy could allow: tools through ctx.mayCall (the seam per-tool
// scopes use, so tool search's lists follow too), prompts and resources filtered from the page.
// Without a policy file a request costs one comparison here.
import type { RequestContext } from '../contracts/request-context.js';
import type { McpResult } from '../contracts/upstream.js';
import { GatewayError } from '../jsonrpc/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/messages.js';
import type { DataPathEvents } from '../observability/events.js';
import type { PolicyAction } from '../policy/cedar-schema.js';
import type { LivePolicy } from '../policy/live-policy.js';
import type { PolicyRequest, PolicySet } from '../policy/policy-set.js';
import { TASK_METHODS_2025, TASK_METHODS_2026 } from '../tasks/shapes.js';
import type { Catalog } from './catalog.js';
import {
  argumentsOf,
  endpointResource,
  principalOf,
  promptResource,
  resourceOf,
  toolResource,
} from './policy-facts.js';
import type { ResultStep, Wrapper } from './request-chain.js';
import type { ServerView } from './server-views.js';
import { SEARCH_TOOL } from './tool-search-tools.js';

const ACTION_OF: ReadonlyMap<string, PolicyAction> = new Map<string, PolicyAction>([
  ['tools/call', 'callTool'],
  ['prompts/get', 'getPrompt'],
  ['resources/read', 'readResource'],
  ['tools/list', 'list'],
  ['prompts/list', 'list'],
  ['resources/list', 'list'],
  ['resources/templates/list', 'list'],
  ...[...TASK_METHODS_2025, ...TASK_METHODS_2026].map((m): [string, PolicyAction] => [m, 'task']),
]);

type Facts = Omit<PolicyRequest, 'action' | 'resource' | 'arguments'>;

function factsOf(ctx: RequestContext, live: LivePolicy, method: string): Facts {
  const now = new Date();
  return {
    principal: principalOf(ctx, live),
    context: {
      method,
      era: ctx.stateless ? '2026-07-28' : '2025',
      transport: ctx.http ? 'streamable-http' : 'connection',
      hour: now.getUTCHours(),
      weekday: now.getUTCDay(),
      epoch: Math.floor(now.getTime() / 1000),
    },
  };
}

/** The chain's policy wrapper; `live.set` is read per request (a reload swaps it). */
export function policyStep(live: LivePolicy, diagnostics: DataPathEvents): Wrapper<ResultStep> {
  const decide = (set: PolicySet, ctx: RequestContext, request: PolicyRequest, target: string): void => {
    const started = performance.now();
    const decision = set.decide(request);
    diagnostics.emit('policy:decision', {
      action: request.action,
      method: request.context.method,
      target,
      allowed: decision.allowed,
      policies: decision.policies,
      seconds: (performance.now() - started) / 1000,
      requestId: ctx.http?.requestId,
      principal: ctx.principal,
    });
    if (!decision.allowed)
      throw new GatewayError('POLICY_DENIED', `Denied by the authorization policy (${request.action})`, {
        action: request.action,
        ...(target ? { resource: target } : {}),
        policies: decision.policies,
      });
  };
  return (next) => (ctx, request, view, catalog) => {
    const set = live.set;
    const action = set && ACTION_OF.get(request.method);
    if (!set || !action) return next(ctx, request, view, catalog);
    const facts = factsOf(ctx, live, request.method);
    if (action === 'list' || action === 'task') {
      decide(set, ctx, { ...facts, action, resource: endpointResource(view), arguments: {} }, '');
      return action === 'list'
        ? listed(set, facts, ctx, request, view, catalog, next)
        : next(ctx, request, view, catalog);
    }
    const name = String((action === 'readResource' ? request.params?.uri : request.params?.name) ?? '');
    const resource = resourceFor(action, name, view, catalog);
    // A name no upstream serves (or the gateway's own tools): the handler answers it as it would;
    // search_tools finds only what the policy could allow, as a list would show it.
    if (!resource)
      return action === 'callTool' && name === SEARCH_TOOL
        ? next(withMayCall(set, facts, ctx, view, catalog), request, view, catalog)
        : next(ctx, request, view, catalog);
    decide(set, ctx, { ...facts, action, resource, arguments: argumentsOf(request.params?.arguments) }, name);
    return next(ctx, request, view, catalog);
  };
}

function resourceFor(action: PolicyAction, name: string, view: ServerView | undefined, catalog: Catalog) {
  if (action === 'callTool') return toolResource(name, view, catalog);
  if (action === 'getPrompt') return promptResource(name, view, catalog);
  return resourceOf(name, view, catalog);
}

/** Whether the policy could allow some request of `action` on `name` (an unknown name: the handler's to answer). */
function mayFor(set: PolicySet, facts: Facts, view: ServerView | undefined, catalog: Catalog) {
  return (action: PolicyAction, name: string): boolean => {
    const resource = resourceFor(action, name, view, catalog);
    return !resource || set.mayAllow({ ...facts, action, resource, arguments: undefined });
  };
}

/** The context with `mayCall` also asking the policy: the seam tools/list and tool search filter by. */
function withMayCall(
  set: PolicySet,
  facts: Facts,
  ctx: RequestContext,
  view: ServerView | undefined,
  catalog: Catalog,
): RequestContext {
  const may = mayFor(set, facts, view, catalog);
  const scoped = ctx.mayCall;
  return { ...ctx, mayCall: (tool) => (!scoped || scoped(tool)) && may('callTool', tool) };
}

/** A list as the policy could allow it: tools by mayCall, prompts and resources taken off the page. */
async function listed(
  set: PolicySet,
  facts: Facts,
  ctx: RequestContext,
  request: JsonRpcRequest,
  view: ServerView | undefined,
  catalog: Catalog,
  next: ResultStep,
): Promise<McpResult> {
  const may = mayFor(set, facts, view, catalog);
  if (request.method === 'tools/list') return next(withMayCall(set, facts, ctx, view, catalog), request, view, catalog);
  const result = await next(ctx, request, view, catalog);
  const [field, action, key] =
    request.method === 'prompts/list'
      ? (['prompts', 'getPrompt', 'name'] as const)
      : (['resources', 'readResource', 'uri'] as const);
  const entries = result[field];
  if (!Array.isArray(entries)) return result;
  return {
    ...result,
    [field]: entries.filter((e: Record<string, unknown>) => may(action, String(e[key]))),
  };
}
