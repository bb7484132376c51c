// Who a task belongs to: whose bounds it counts against (tasks.maxPerPrincipal, .maxBytesPerPrincipal)
// and who may see it. The bindings' spellings; which one a request's task gets is its era's to say
// (eras.ts: bindingOf, mayRead).

/** A task's binding with auth on: its principal's. */
export function principalBinding(principal: string): string {
  return `p:${principal}`;
}

/** The binding of a 2025 session's tasks without auth: they go when it ends. */
export function sessionBinding(scope: string): string {
  return `s:${scope}`;
}

/** The binding of an anonymous 2026-07-28 task starts so. */
export const BY_ADDRESS = 'a:';

/**
 * An anonymous 2026-07-28 task's binding: its client's address, for its bounds only (no session,
 * no principal: the TCP peer is all that tells two such clients apart).
 */
export function addressBinding(remoteAddress: string | undefined): string {
  return `${BY_ADDRESS}${remoteAddress ?? ''}`;
}
