/**
 * Which replica runs the worker of a (scope, upstream) pair in per-session mode. A worker is a
 * process on one replica; every other replica forwards that scope's calls to it. Ownership
 * lives as long as the owner's heartbeat: a dead owner's scopes are taken over by the next
 * replica that needs them (a new upstream session, logged).
 */
export interface OwnerRegistry {
  readonly replicaId: string;
  /** The owner's replica id, claiming ownership for this replica when nobody (alive) owns it. */
  claim(scope: string, upstream: string): Promise<string>;
  /** Takes ownership from `deadOwner` (it stopped answering); returns the owner after the attempt. */
  takeOver(scope: string, upstream: string, deadOwner: string): Promise<string>;
  /** The current owner, if any (alive or not), without claiming. */
  ownerOf(scope: string, upstream: string): Promise<string | undefined>;
  /** Drops this replica's ownership (the worker stopped). */
  release(scope: string, upstream: string): Promise<void>;
  isAlive(replicaId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** One replica: it owns everything. */
export class LocalOwnerRegistry implements OwnerRegistry {
  constructor(readonly replicaId: string) {}

  async claim(): Promise<string> {
    return this.replicaId;
  }

  async takeOver(): Promise<string> {
    return this.replicaId;
  }

  async ownerOf(): Promise<string | undefined> {
    return this.replicaId;
  }

  async release(): Promise<void> {}

  async isAlive(replicaId: string): Promise<boolean> {
    return replicaId === this.replicaId;
  }

  async close(): Promise<void> {}
}
