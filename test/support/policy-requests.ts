/**
 * Requests for the policy module's tests (policy/policy-set.ts), built as the policy step builds
 * them: a client or anonymous principal, a tool with its hints, a call's context and arguments;
 * and a small deterministic generator so property runs repeat run to run.
 */
import type { PolicyRequest } from '../../src/policy/policy-set.js';

export type Principal = PolicyRequest['principal'];
export type Resource = PolicyRequest['resource'];
export type Time = { hour: number; weekday: number };

// Tuesday 10:00 UTC, and Saturday 22:00 UTC.
export const OFFICE: Time = { hour: 10, weekday: 2 };
export const NIGHT: Time = { hour: 22, weekday: 6 };

export const client = (
  id: string,
  scopes: string[] = [],
  claims: Record<string, string> = {},
  address = '127.0.0.1',
): Principal => ({ kind: 'client', id, name: id, scopes, claims, address });

export const anonymous: Principal = { kind: 'anonymous', address: '127.0.0.1' };

/** A tool named `<upstream>__<original>`, on the main endpoint. */
export function tool(name: string, readOnlyHint: boolean): Resource {
  return {
    type: 'Tool',
    id: name,
    attrs: {
      name,
      upstream: name.split('__')[0]!,
      original: name.split('__')[1]!,
      server: 'main',
      readOnlyHint,
      destructiveHint: !readOnlyHint,
      idempotentHint: false,
      openWorldHint: true,
    },
  };
}

/** A tools/call of `resource` by `principal` (a list's question when `args` is undefined). */
export function call(
  principal: Principal,
  resource: Resource,
  args: Record<string, string> | undefined,
  time: Time = OFFICE,
): PolicyRequest {
  return {
    principal,
    action: 'callTool',
    resource,
    context: { method: 'tools/call', era: '2025', transport: 'streamable-http', epoch: 1_700_000_000, ...time },
    arguments: args,
  };
}

/** A small deterministic generator (mulberry32): the property's cases repeat run to run. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A decision as a value to compare: Cedar lists the deciding policies in no fixed order. */
export function decided(decision: { allowed: boolean; policies: readonly string[] }) {
  return { allowed: decision.allowed, policies: [...decision.policies].sort() };
}
