/** What a gateway holds for its clients right now, read from its own /readyz and in-flight table. */
import type { RunningGateway } from './gateway.js';
import { until } from './wait.js';
import { internals } from '../../src/gateway/internals.js';

export interface HeldWork {
  /** Calls in flight on upstream workers, summed over every upstream. */
  inFlight: number;
  /** Calls waiting for a worker. */
  queued: number;
  /** Client requests the virtual server still tracks. */
  tracked: number;
}

/** One upstream's pool as /readyz reports it. */
export async function poolStatus(
  gw: RunningGateway,
  upstream: string,
): Promise<{ workers: number; ready: number; inFlight: number; queued: number }> {
  const body = (await (await fetch(new URL('/readyz', gw.base))).json()) as {
    upstreams: Record<string, { workers: number; ready: number; inFlight: number; queued: number }>;
  };
  const pool = body.upstreams[upstream];
  if (!pool) throw new Error(`/readyz names no upstream ${upstream}`);
  return pool;
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

/**
 * Waits until nothing is held: no call in flight or queued on a worker, none tracked by the virtual
 * server; fails with the last reading after `timeoutMs`. Polled, never read once: the gateway's own
 * work (a health check of a remote upstream every `health.intervalMs`, a spare starting) is in flight
 * for a moment, while a leaked slot stays held for good.
 */
export async function untilNothingHeld(gw: RunningGateway, timeoutMs = 10_000): Promise<void> {
  let last: HeldWork | undefined;
  try {
    await until(
      'nothing held',
      async () => {
        last = await heldWork(gw);
        return last.inFlight === 0 && last.queued === 0 && last.tracked === 0;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last read: ${JSON.stringify(last)}`);
  }
}

/**
 * One series of the gateway's /metrics as a number (0 when absent: a counter not counted yet),
 * named as the exposition writes it, e.g. `mcpgw_sse_streams_open{kind="get"}`.
 */
export async function metricValue(gw: RunningGateway, series: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gw.base))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
