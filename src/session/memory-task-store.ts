import { END_RESERVE_BYTES, readTaskRecord, recordBytes, taskLimit, writeTaskRecord } from '../contracts/task-store.js';
import type { TaskBounds, TaskPage, TaskRecord, TaskStatus, TaskStore } from '../contracts/task-store.js';
import { decodeCursor, encodeCursor } from './task-cursor.js';

/** A record as held: its JSON (what Redis would hold, and what its bytes are counted by). */
interface Held {
  json: string;
  status: TaskStatus;
  binding: string;
  expiresAt: number;
  /** What it counts against its binding's bytes: the largest its JSON has been. */
  charged: number;
}

/** One binding's live tasks, in creation order, and the bytes they are charged. */
interface Binding {
  ids: Set<string>;
  bytes: number;
}

/**
 * Tasks in this process (one replica). A record is gone `ttlMs` after its creation: reads skip
 * it at once, and a sweep (unref'd, so it keeps no process alive) frees its memory.
 */
export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Held>();
  readonly #bindings = new Map<string, Binding>();
  readonly #sweep: NodeJS.Timeout;

  constructor(sweepMs = 10_000) {
    this.#sweep = setInterval(() => this.#expire(), sweepMs);
    this.#sweep.unref();
  }

  async create(record: TaskRecord, bounds: TaskBounds): Promise<void> {
    const json = writeTaskRecord(record);
    const size = recordBytes(json) + END_RESERVE_BYTES;
    const current = this.#bindings.get(record.binding);
    if (current) for (const id of current.ids) if (!this.#live(id)) this.#drop(id);
    const binding = this.#bindings.get(record.binding) ?? { ids: new Set<string>(), bytes: 0 };
    if (binding.ids.size >= bounds.maxPerPrincipal) throw taskLimit('maxPerPrincipal', bounds.maxPerPrincipal);
    const { maxBytesPerPrincipal } = bounds;
    if (binding.bytes + size > maxBytesPerPrincipal) throw taskLimit('maxBytesPerPrincipal', maxBytesPerPrincipal);
    this.#bindings.set(record.binding, binding);
    binding.ids.add(record.taskId);
    binding.bytes += size;
    const expiresAt = record.createdAt + record.ttlMs;
    this.#tasks.set(record.taskId, { json, status: record.status, binding: record.binding, expiresAt, charged: size });
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const held = this.#live(taskId);
    return held ? readTaskRecord(held.json) : undefined;
  }

  async transition(next: TaskRecord, from: readonly TaskStatus[], maxBytes = Infinity): Promise<boolean> {
    const held = this.#live(next.taskId);
    if (!held || !from.includes(held.status)) return false;
    const json = writeTaskRecord(next);
    const size = recordBytes(json);
    const binding = this.#bindings.get(held.binding);
    if (binding && size > held.charged) {
      if (binding.bytes - held.charged + size > maxBytes) throw taskLimit('maxBytesPerPrincipal', maxBytes);
      binding.bytes += size - held.charged;
      held.charged = size;
    }
    held.json = json;
    held.status = next.status;
    return true;
  }

  async list(binding: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined> {
    const start = cursor === undefined ? 0 : decodeCursor(cursor);
    if (start === undefined) return undefined;
    const ids = [...(this.#bindings.get(binding)?.ids ?? [])];
    const live = ids.map((id) => this.#live(id)).filter((r): r is Held => r !== undefined);
    const tasks = live.slice(start, start + limit).map((r) => readTaskRecord(r.json));
    return start + limit < live.length ? { tasks, nextCursor: encodeCursor(start + limit) } : { tasks };
  }

  async dropBinding(binding: string): Promise<void> {
    for (const id of this.#bindings.get(binding)?.ids ?? []) this.#drop(id);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
  }

  /** How many records are held (expired ones not yet swept included). */
  get size(): number {
    return this.#tasks.size;
  }

  /** The bytes every binding's records are charged, together. */
  get bytes(): number {
    let sum = 0;
    for (const b of this.#bindings.values()) sum += b.bytes;
    return sum;
  }

  #live(taskId: string): Held | undefined {
    const held = this.#tasks.get(taskId);
    return held && held.expiresAt > Date.now() ? held : undefined;
  }

  #drop(taskId: string): void {
    const held = this.#tasks.get(taskId);
    if (!held) return;
    this.#tasks.delete(taskId);
    const binding = this.#bindings.get(held.binding);
    if (!binding) return;
    binding.ids.delete(taskId);
    binding.bytes -= held.charged;
    if (binding.ids.size === 0) this.#bindings.delete(held.binding);
  }

  #expire(): void {
    for (const id of this.#tasks.keys()) if (!this.#live(id)) this.#drop(id);
  }
}
