// One configured upstream as the virtual server's parts see it, whichever its sharing mode.
import { isObject } from '../jsonrpc/messages.js';
import type { UpstreamServerInfo } from '../contracts/upstream.js';
import type { PoolStatus, UpstreamPool } from '../upstream/pool.js';
import type { SessionWorkers } from '../upstream/session-workers.js';
import type { Deadline } from './in-flight.js';

interface EntryCommon {
  prefix: string;
  deadline: Deadline;
  /** Which of its tools (by their own names) the gateway offers; the rest do not exist for clients. */
  offersTool?: (name: string) => boolean;
  /** Whether tools/call arguments are checked against the tool's inputSchema (`upstreams[].validateArguments`). */
  validateArguments: boolean;
}

/** One configured upstream: a shared pool, or a worker per client session. */
export type UpstreamEntry = EntryCommon & ({ mode: 'shared'; pool: UpstreamPool } | { mode: 'per-session'; workers: SessionWorkers });

export function upstreamStatus(entry: UpstreamEntry): PoolStatus {
  return entry.mode === 'shared' ? entry.pool.status() : entry.workers.status();
}

/** What the upstream said at initialize; undefined while it is not up. */
export function upstreamInfo(entry: UpstreamEntry): UpstreamServerInfo | undefined {
  return entry.mode === 'shared' ? entry.pool.info : entry.workers.info;
}

/** Whether the upstream lets clients subscribe to its resources. */
export function offersSubscriptions(info: UpstreamServerInfo | undefined): boolean {
  const resources = info?.capabilities.resources;
  return isObject(resources) && resources.subscribe === true;
}
