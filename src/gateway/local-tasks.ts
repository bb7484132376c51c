// The tasks this replica runs (their call, or the input chain it waits on), so that a replica
// that stops on purpose fails them at once instead of leaving them to its heartbeat's lapse.
import type { Logger } from 'pino';
import { LIVE, type TaskRecord, type TaskStore } from '../contracts/task-store.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isTerminal, settled } from './task-wire.js';

export class LocalTasks {
  /** Task id to when its record expires. */
  readonly #ids = new Map<string, number>();

  track(record: TaskRecord): void {
    const now = Date.now();
    // Tasks that ended elsewhere (answered, then run on another replica) leave once expired.
    if (this.#ids.size > 0 && this.#ids.size % 1024 === 0) for (const [id, until] of this.#ids) if (until < now) this.#ids.delete(id);
    this.#ids.set(record.taskId, record.createdAt + record.ttlMs);
  }

  delete(taskId: string): void {
    this.#ids.delete(taskId);
  }

  /** Fails every task still live and run by this replica (TASK_REPLICA_LOST, reason "shutdown"); how many. */
  async failAll(store: TaskStore, replicaId: string, log: Logger): Promise<number> {
    const lost = new GatewayError('TASK_REPLICA_LOST', undefined, { replica: replicaId, reason: 'shutdown' }).toJsonRpc();
    const ids = [...this.#ids.keys()];
    this.#ids.clear();
    const failed = await Promise.all(
      ids.map(async (id) => {
        try {
          const r = await store.get(id);
          if (!r || isTerminal(r.status) || r.owner !== replicaId) return false;
          return await store.transition(settled(r, { error: lost }, Date.now()), LIVE);
        } catch (err) {
          log.warn({ err, taskId: id }, 'task: failing it at shutdown failed');
          return false;
        }
      }),
    );
    return failed.filter(Boolean).length;
  }
}
