// Counts inside a running virtual server that tests assert on. They sit behind a symbol, so
// they are no part of the API: only tests call internals().

import type { TaskStore } from '../contracts/task-store.js';

export const INTERNALS: unique symbol = Symbol('mcpgw.gateway.internals');

export interface VirtualServerInternals {
  /** Client requests forwarded and not yet answered, on this replica. */
  readonly inFlight: number;
  /** How many per-session workers of `upstream` run on this replica. */
  perSessionWorkers(upstream: string): number;
  /** upstreams[].fairness: calls holding a principal's place on `upstream`, and calls waiting for one. */
  fairShares(upstream: string): { inFlight: number; queued: number };
  /**
   * Without a task engine none; else its store, and what tasks hold here: the in-flight places
   * their calls keep, the tasks waited for, the tasks listen streams follow.
   */
  readonly tasks: { store: TaskStore; places: number; waits: number; followed: number } | undefined;
}

export function internals(server: { readonly [INTERNALS]: VirtualServerInternals }): VirtualServerInternals {
  return server[INTERNALS];
}
