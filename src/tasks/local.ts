// The tasks this replica runs (their call, or the input chain it waits on), so that a replica
// that stops on purpose fails them at once instead of leaving them to its heartbeat's lapse;
// and the places their calls keep of their clients' in-flight shares.
import type { Logger } from 'pino';
import type { RequestContext } from '../contracts/request-context.js';
import { LIVE, type TaskRecord, type TaskStore } from '../contracts/task-store.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { transition } from './transitions.js';

const NOTHING_HELD = (): void => undefined;

export class LocalTasks {
  /** Task id to when its record expires. */
  readonly #ids = new Map<string, number>();
  #places = 0;

  /**
   * A task's call keeps a place of its client's share (limits.maxInFlightPerClient) from the
   * request that started it until the call ends, as the call made plainly would: a client's
   * tasks cannot take more workers than its plain calls. Returns what gives it back (once).
   */
  hold(ctx: RequestContext): () => void {
    const { slots, client } = ctx;
    if (!slots || client === undefined) return NOTHING_HELD;
    slots.keep(client);
    this.#places++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#places--;
      slots.release(client);
    };
  }

  /** Places of in-flight shares that tasks' calls keep on this replica. */
  get places(): number {
    return this.#places;
  }

  track(record: TaskRecord): void {
    const now = Date.now();
    // Tasks that ended elsewhere (answered, then run on another replica) leave once expired.
    if (this.#ids.size > 0 && this.#ids.size % 1024 === 0)
      for (const [id, until] of this.#ids) if (until < now) this.#ids.delete(id);
    this.#ids.set(record.taskId, record.createdAt + record.ttlMs);
  }

  delete(taskId: string): void {
    this.#ids.delete(taskId);
  }

  /** Fails every task still live and run by this replica (TASK_REPLICA_LOST, reason "shutdown"); how many. */
  async failAll(store: TaskStore, replicaId: string, log: Logger): Promise<number> {
    const lost = new GatewayError('TASK_REPLICA_LOST', undefined, {
      replica: replicaId,
      reason: 'shutdown',
    }).toJsonRpc();
    const ids = [...this.#ids.keys()];
    this.#ids.clear();
    const failed = await Promise.all(
      ids.map(async (id) => {
        try {
          const r = await store.get(id);
          if (!r || r.owner !== replicaId) return false;
          const failed = transition(r, { type: 'failed', error: lost }, Date.now());
          return failed.ok && (await store.transition(failed.record, LIVE));
        } catch (err) {
          log.warn({ err, taskId: id }, 'task: failing it at shutdown failed');
          return false;
        }
      }),
    );
    return failed.filter(Boolean).length;
  }
}
