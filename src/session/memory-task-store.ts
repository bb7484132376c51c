import type { TaskPage, TaskRecord, TaskStatus, TaskStore } from '../contracts/task-store.js';
import { decodeCursor, encodeCursor } from './task-cursor.js';

/**
 * Tasks in this process (one replica). A record is gone `ttlMs` after its creation: reads skip
 * it at once, and a sweep (unref'd, so it keeps no process alive) frees its memory.
 */
export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();
  /** Per binding, its task ids in creation order. */
  readonly #byBinding = new Map<string, Set<string>>();
  readonly #sweep: NodeJS.Timeout;

  constructor(sweepMs = 10_000) {
    this.#sweep = setInterval(() => this.#expire(), sweepMs);
    this.#sweep.unref();
  }

  async create(record: TaskRecord, maxPerBinding: number): Promise<boolean> {
    let ids = this.#byBinding.get(record.binding);
    if (ids) for (const id of ids) if (!this.#live(id)) this.#drop(id);
    ids = this.#byBinding.get(record.binding);
    if (ids && ids.size >= maxPerBinding) return false;
    if (!ids) this.#byBinding.set(record.binding, (ids = new Set()));
    ids.add(record.taskId);
    this.#tasks.set(record.taskId, structuredClone(record));
    return true;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const record = this.#live(taskId);
    return record ? structuredClone(record) : undefined;
  }

  async transition(next: TaskRecord, from: readonly TaskStatus[]): Promise<boolean> {
    const current = this.#live(next.taskId);
    if (!current || !from.includes(current.status)) return false;
    this.#tasks.set(next.taskId, structuredClone(next));
    return true;
  }

  async list(binding: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined> {
    const start = cursor === undefined ? 0 : decodeCursor(cursor);
    if (start === undefined) return undefined;
    const live = [...(this.#byBinding.get(binding) ?? [])].map((id) => this.#live(id)).filter((r): r is TaskRecord => r !== undefined);
    const tasks = live.slice(start, start + limit).map((r) => structuredClone(r));
    return start + limit < live.length ? { tasks, nextCursor: encodeCursor(start + limit) } : { tasks };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
  }

  /** How many records are held (expired ones not yet swept included). */
  get size(): number {
    return this.#tasks.size;
  }

  #live(taskId: string): TaskRecord | undefined {
    const record = this.#tasks.get(taskId);
    return record && record.createdAt + record.ttlMs > Date.now() ? record : undefined;
  }

  #drop(taskId: string): void {
    const record = this.#tasks.get(taskId);
    if (!record) return;
    this.#tasks.delete(taskId);
    const ids = this.#byBinding.get(record.binding);
    ids?.delete(taskId);
    if (ids?.size === 0) this.#byBinding.delete(record.binding);
  }

  #expire(): void {
    for (const id of this.#tasks.keys()) if (!this.#live(id)) this.#drop(id);
  }
}
