/**
 * Messages between replicas: a channel per replica (calls forwarded to the owner of a
 * session's worker, and what comes back) and a channel per session (what must reach the
 * replica holding that session's GET stream). In memory for one process; Redis pub/sub for
 * many. Delivery is at most once: anything that must survive a lost message (stream events
 * for resumption) goes through the EventStore, not only the bus.
 */
export interface Bus {
  /** This replica's id: unique per process, the address other replicas publish to. */
  readonly replicaId: string;
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function ends it. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export function replicaChannel(replicaId: string): string {
  return `replica:${replicaId}`;
}

export function sessionChannel(sessionId: string): string {
  return `session:{${sessionId}}`;
}

/** The live events of one SSE stream of a session, for a replica serving a resumed GET of it. */
export function streamChannel(sessionId: string, streamId: string): string {
  return `stream:{${sessionId}}:${streamId}`;
}
