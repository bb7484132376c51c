// tasks/result (2025-11-25) blocks until its task ends, and the call may run on any replica, so
// the store is polled. However many requests wait for one task, this replica polls it once:
// each waiter awaits the same wait, and the record read is shared, not copied per waiter.
import type { TaskRecord } from '../contracts/task-store.js';
import { GatewayError } from '../jsonrpc/errors.js';
import { isTerminal } from './transitions.js';

/** At most this long between two reads of a task that is waited for, whatever pollIntervalMs says. */
const MAX_POLL_MS = 250;

export class TaskWaits {
  readonly #waits = new Map<string, Promise<TaskRecord>>();

  /** `read`: the task as a waiter may see it now (undefined: gone, expired or dropped). */
  constructor(private readonly read: (taskId: string) => Promise<TaskRecord | undefined>) {}

  /** The task once it has ended; TASK_NOT_FOUND if it is gone first. */
  until(record: TaskRecord): Promise<TaskRecord> {
    if (isTerminal(record.status)) return Promise.resolve(record);
    let wait = this.#waits.get(record.taskId);
    if (!wait) {
      wait = this.#poll(record).finally(() => this.#waits.delete(record.taskId));
      this.#waits.set(record.taskId, wait);
    }
    return wait;
  }

  /** Tasks waited for on this replica. */
  get size(): number {
    return this.#waits.size;
  }

  async #poll(record: TaskRecord): Promise<TaskRecord> {
    const waitMs = Math.min(record.pollIntervalMs, MAX_POLL_MS);
    let r = record;
    while (!isTerminal(r.status)) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const next = await this.read(r.taskId);
      if (!next) throw new GatewayError('TASK_NOT_FOUND');
      r = next;
    }
    return r;
  }
}
