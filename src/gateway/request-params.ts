// The checks of a request's params every handler shares.
import type { RequestContext } from '../contracts/request-context.js';
import { GatewayError } from '../jsonrpc/errors.js';

export function requireString(params: Record<string, unknown> | undefined, key: string): string {
  const v = params?.[key];
  if (typeof v !== 'string') throw new GatewayError('INVALID_PARAMS', `params.${key} must be a string`);
  return v;
}

export function resourceNotFound(ctx: RequestContext, uri: string): GatewayError {
  return new GatewayError(ctx.stateless ? 'MODERN_RESOURCE_NOT_FOUND' : 'RESOURCE_NOT_FOUND', `Resource not found: ${uri}`, { uri });
}
