/**
 * Messages between replicas: a channel per replica (calls forwarded to the owner of a
 * session's worker, and what comes back), a channel per SSE stream (what must reach the
 * replica holding that stream), and channels every replica hears (cancellations, session
 * changes); bus-messages.ts names them all and their messages. In memory for one process; Redis
 * pub/sub for many. Delivery is at most once: anything that must survive a lost message
 * (stream events for resumption) goes through the EventStore, not only the bus.
 */
export interface Bus {
  /** This replica's id: unique per process, the address other replicas publish to. */
  readonly replicaId: string;
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function ends it. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
