// Who a task belongs to: whose bounds it counts against (tasks.maxPerPrincipal, .maxBytesPerPrincipal)
// and who may see it, for the gateway's own tasks and for the wrapped ids of an upstream's.
import type { RequestContext } from '../contracts/request-context.js';
import type { TaskRecord } from '../contracts/task-store.js';

/** The binding of an anonymous 2026-07-28 task starts so. */
const BY_ADDRESS = 'a:';

/**
 * A new task's binding: its principal with auth on; without, a 2025 task's session, and a
 * 2026-07-28 task's client address, for its bounds only (no session, no principal: the TCP peer
 * is all that tells two such clients apart). Whoever holds such a task's id may see it
 * (unguessable: 192 random bits; the spec's fallback).
 */
export function bindingOf(ctx: RequestContext): string {
  if (ctx.principal !== undefined) return `p:${ctx.principal}`;
  return ctx.stateless ? `${BY_ADDRESS}${ctx.remoteAddress ?? ''}` : sessionBinding(ctx.scope);
}

/** The binding of a 2025 session's tasks without auth: they go when it ends. */
export function sessionBinding(scope: string): string {
  return `s:${scope}`;
}

/** Whether this request may see the task (unknown and others' ids read alike: not found). */
export function mayRead(ctx: RequestContext, r: TaskRecord): boolean {
  if (r.era !== (ctx.stateless ? '2026-07-28' : '2025-11-25')) return false;
  if (ctx.stateless && ctx.principal === undefined) return r.binding.startsWith(BY_ADDRESS);
  return r.binding === bindingOf(ctx);
}

/** Who may use a wrapped id of an upstream's task (no store, nothing to bound): as mayRead sees the gateway's own. */
export function wrappedBinding(ctx: RequestContext): string {
  if (ctx.principal !== undefined) return `p:${ctx.principal}`;
  return ctx.stateless ? 'anonymous' : sessionBinding(ctx.scope);
}
