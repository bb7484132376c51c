// Counts inside a running virtual server that tests assert on. They sit behind a symbol, so
// they are no part of the API: only tests call internals().

export const INTERNALS: unique symbol = Symbol('mcpgw.gateway.internals');

export interface VirtualServerInternals {
  /** Client requests forwarded and not yet answered, on this replica. */
  readonly inFlight: number;
  /** How many per-session workers of `upstream` run on this replica. */
  perSessionWorkers(upstream: string): number;
}

export function internals(server: { readonly [INTERNALS]: VirtualServerInternals }): VirtualServerInternals {
  return server[INTERNALS];
}
