// Which era adapter serves a request or a task: the one place that tells the eras apart.
import type { RequestContext } from '../contracts/request-context.js';
import type { TaskEra, TaskRecord } from '../contracts/task-store.js';
import { principalBinding } from './binding.js';
import type { TaskEraAdapter } from './era.js';
import { ERA_2025 } from './era-2025.js';
import { ERA_2026 } from './era-2026.js';

const ADAPTERS: Readonly<Record<TaskEra, TaskEraAdapter>> = { '2025-11-25': ERA_2025, '2026-07-28': ERA_2026 };

/** The era of a request's tasks: 2026-07-28 for a stateless request, else its session's. */
export function eraOf(ctx: RequestContext): TaskEraAdapter {
  return ctx.stateless ? ERA_2026 : ERA_2025;
}

/** The era a task was made in, whoever reads it. */
export function eraOfRecord(r: TaskRecord): TaskEraAdapter {
  return ADAPTERS[r.era];
}

/**
 * A new task's binding: its principal with auth on; without, its era's (a 2025 session's, a
 * 2026-07-28 client's address).
 */
export function bindingOf(ctx: RequestContext): string {
  return ctx.principal !== undefined ? principalBinding(ctx.principal) : eraOf(ctx).anonymousBinding(ctx);
}

/** Whether this request may see the task (unknown and others' ids read alike: not found). */
export function mayRead(ctx: RequestContext, r: TaskRecord): boolean {
  const era = eraOf(ctx);
  if (r.era !== era.era) return false;
  return ctx.principal === undefined ? era.readsAnonymous(ctx, r) : r.binding === bindingOf(ctx);
}

/**
 * Whether this client may send this tasks/* method at all (its era's methods, a revision with
 * tasks, the 2026-07-28 extension declared on the request); throws the error it gets otherwise.
 */
export function admitTaskMethod(ctx: RequestContext, method: string): void {
  eraOf(ctx).admit(ctx, method);
}
