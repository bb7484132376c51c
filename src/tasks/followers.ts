// notifications/tasks on 2026-07-28 listen streams (the tasks extension, SEP-2663): a listen's
// `taskIds` names tasks whose every status change its stream then carries, each notification the
// DetailedTask tasks/get would give at that moment. A task's call runs on any replica, and so does
// tasks/update or tasks/cancel: the store is polled, as tasks/result's waits poll it, once per
// task and replica however many streams follow it, until the task ends, is gone, or nobody follows.
import type { MessageSink } from '../contracts/request-context.js';
import type { TaskRecord } from '../contracts/task-store.js';
import { eraOfRecord } from './eras.js';
import { isTerminal } from './transitions.js';

/** At most this long between two reads of a followed task, whatever pollIntervalMs says (waits.ts's bound). */
const MAX_POLL_MS = 250;

interface Followed {
  /** The streams following it, by the scope each belongs to (released with it). */
  sinks: Map<MessageSink, string>;
  /** What was last sent: the record's status and lastUpdatedAt. */
  seen: string;
  pollMs: number;
  timer: NodeJS.Timeout | undefined;
}

function versionOf(r: TaskRecord): string {
  return `${r.status}@${r.lastUpdatedAt}`;
}

export function taskNotification(r: TaskRecord): {
  jsonrpc: '2.0';
  method: 'notifications/tasks';
  params: Record<string, unknown>;
} {
  return { jsonrpc: '2.0', method: 'notifications/tasks', params: eraOfRecord(r).got(r) };
}

export class TaskFollowers {
  readonly #followed = new Map<string, Followed>();

  /** `read`: the task as its client may see it now (undefined: gone or expired). */
  constructor(private readonly read: (taskId: string) => Promise<TaskRecord | undefined>) {}

  /**
   * `sink` (a listen stream of `scope`) follows `records` (read just now, and readable by that
   * client): each one's current state goes first, once the caller has acknowledged the listen
   * (the next turn), then every change. Returns their ids, for the acknowledgement.
   */
  follow(scope: string, records: readonly TaskRecord[], sink: MessageSink): string[] {
    for (const r of records) {
      setImmediate(() => sink.send(taskNotification(r)));
      if (isTerminal(r.status)) continue;
      let f = this.#followed.get(r.taskId);
      if (!f) {
        f = {
          sinks: new Map(),
          seen: versionOf(r),
          pollMs: Math.max(1, Math.min(r.pollIntervalMs, MAX_POLL_MS)),
          timer: undefined,
        };
        this.#followed.set(r.taskId, f);
        this.#schedule(r.taskId, f);
      }
      f.sinks.set(sink, scope);
    }
    return records.map((r) => r.taskId);
  }

  /** The scope's streams closed: they follow nothing more. */
  release(scope: string): void {
    for (const [taskId, f] of this.#followed) {
      for (const [sink, s] of f.sinks) if (s === scope) f.sinks.delete(sink);
      if (f.sinks.size === 0) this.#stop(taskId, f);
    }
  }

  /** Tasks followed on this replica (each polled once). */
  get size(): number {
    return this.#followed.size;
  }

  close(): void {
    for (const [taskId, f] of this.#followed) this.#stop(taskId, f);
  }

  #schedule(taskId: string, f: Followed): void {
    f.timer = setTimeout(() => void this.#poll(taskId, f), f.pollMs);
    f.timer.unref();
  }

  async #poll(taskId: string, f: Followed): Promise<void> {
    const r = await this.read(taskId).catch(() => 'unread' as const);
    if (this.#followed.get(taskId) !== f) return;
    // A store that did not answer: tried again next time (the client may poll meanwhile).
    if (r === 'unread') return this.#schedule(taskId, f);
    if (!r) return this.#stop(taskId, f);
    if (versionOf(r) !== f.seen) {
      f.seen = versionOf(r);
      const n = taskNotification(r);
      for (const sink of f.sinks.keys()) sink.send(n);
    }
    if (isTerminal(r.status)) return this.#stop(taskId, f);
    this.#schedule(taskId, f);
  }

  #stop(taskId: string, f: Followed): void {
    clearTimeout(f.timer);
    f.sinks.clear();
    this.#followed.delete(taskId);
  }
}
