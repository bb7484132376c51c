// What every handler shares about a request: which methods list or read the catalog, and the
// checks of its params.
import type { RequestContext } from '../contracts/request-context.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isObject } from '../jsonrpc/messages.js';
import { LIST_METHODS } from '../jsonrpc/list-methods.js';
import type { Catalog } from './catalog.js';

// Sets, not object literals: a method named "constructor" or "__proto__" must find nothing.

/** The methods that read the catalog (a session's own, with per-session upstreams). */
export const CATALOG_METHODS: ReadonlySet<string> = new Set([
  ...LIST_METHODS.keys(),
  'tools/call',
  'prompts/get',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
]);

export function requireString(params: Record<string, unknown> | undefined, key: string): string {
  const v = params?.[key];
  if (typeof v !== 'string') throw new GatewayError('INVALID_PARAMS', `params.${key} must be a string`);
  return v;
}

export function resourceNotFound(ctx: RequestContext, uri: string): GatewayError {
  return new GatewayError(
    ctx.stateless ? 'MODERN_RESOURCE_NOT_FOUND' : 'RESOURCE_NOT_FOUND',
    `Resource not found: ${uri}`,
    { uri },
  );
}

/**
 * Where a completion/complete goes: the upstream of the prompt or resource its `ref` names, with
 * the name or URI as that upstream has it.
 */
export function completionTarget(
  ctx: RequestContext,
  params: Record<string, unknown> | undefined,
  catalog: Catalog,
): { upstream: string; params: Record<string, unknown> } {
  const ref = params?.ref;
  if (!isObject(ref)) throw new GatewayError('INVALID_PARAMS', 'completion/complete needs params.ref');
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    const route = catalog.prompt(ref.name);
    if (!route) throw new GatewayError('INVALID_PARAMS', `Unknown prompt: ${ref.name}`);
    return { upstream: route.upstream, params: { ...params, ref: { ...ref, name: route.original } } };
  }
  if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    const route = catalog.resource(ref.uri);
    if (!route) throw resourceNotFound(ctx, ref.uri);
    return { upstream: route.upstream, params: { ...params, ref: { ...ref, uri: route.original } } };
  }
  throw new GatewayError('INVALID_PARAMS', 'params.ref must be a ref/prompt with a name or a ref/resource with a uri');
}
