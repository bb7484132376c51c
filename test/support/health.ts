/** What a gateway holds for its clients right now, read from its own /readyz and in-flight table. */
import type { RunningGateway } from './gateway.js';
import { internals } from '../../src/gateway/internals.js';

export interface HeldWork {
  /** Calls in flight on upstream workers, summed over every upstream. */
  inFlight: number;
  /** Calls waiting for a worker. */
  queued: number;
  /** Client requests the virtual server still tracks. */
  tracked: number;
}

export async function heldWork(gw: RunningGateway): Promise<HeldWork> {
  const res = await fetch(new URL('/readyz', gw.base));
  const body = (await res.json()) as { upstreams: Record<string, { inFlight: number; queued: number }> };
  let inFlight = 0;
  let queued = 0;
  for (const u of Object.values(body.upstreams)) {
    inFlight += u.inFlight;
    queued += u.queued;
  }
  return { inFlight, queued, tracked: internals(gw.gateway.server).inFlight };
}
