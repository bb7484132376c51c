import { createHash } from 'node:crypto';
import type { TaskPage, TaskRecord, TaskStatus, TaskStore } from '../contracts/task-store.js';
import type { RedisClient } from '../redis/connection.js';
import { decodeCursor, encodeCursor } from './task-cursor.js';

/** Replaces a task's record only while its status is one of ARGV[3..]: cancelled stays cancelled. */
const TRANSITION = `
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return 0 end
for i = 3, #ARGV do
  if s == ARGV[i] then
    redis.call('HSET', KEYS[1], 'status', ARGV[1], 'doc', ARGV[2])
    return 1
  end
end
return 0`;

/**
 * Tasks in Redis, for every replica. A task is a hash `${prefix}task:<id>` (status, doc: the
 * record as JSON) that Redis expires at creation + ttl (PEXPIREAT): no replica keeps a timer.
 * Each binding's live tasks are a sorted set `${prefix}tasks:<digest>` scored by expiry, which
 * bounds them (trimmed of expired members on every create) and lists them. Every command
 * touches one key, so a Redis Cluster takes them as they are.
 */
export class RedisTaskStore implements TaskStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  async create(record: TaskRecord, maxPerBinding: number): Promise<boolean> {
    const set = this.#setKey(record.binding);
    const expiresAt = record.createdAt + record.ttlMs;
    const counted = await this.redis.multi().zremrangebyscore(set, '-inf', Date.now()).zadd(set, expiresAt, record.taskId).zcard(set).pttl(set).exec();
    const card = Number(counted?.[2]?.[1] ?? 0);
    // Added, then counted: of two creates racing for the last place, each sees the other.
    if (card > maxPerBinding) {
      await this.redis.zrem(set, record.taskId);
      return false;
    }
    await this.redis.multi().hset(this.#key(record.taskId), 'status', record.status, 'doc', JSON.stringify(record)).pexpireat(this.#key(record.taskId), expiresAt).exec();
    const pttl = Number(counted?.[3]?.[1] ?? -1);
    if (pttl < record.ttlMs) await this.redis.pexpire(set, record.ttlMs);
    return true;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const doc = await this.redis.hget(this.#key(taskId), 'doc');
    return doc === null ? undefined : (JSON.parse(doc) as TaskRecord);
  }

  async transition(next: TaskRecord, from: readonly TaskStatus[]): Promise<boolean> {
    const applied = await this.redis.eval(TRANSITION, 1, this.#key(next.taskId), next.status, JSON.stringify(next), ...from);
    return Number(applied) === 1;
  }

  async list(binding: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined> {
    const start = cursor === undefined ? 0 : decodeCursor(cursor);
    if (start === undefined) return undefined;
    const ids = await this.redis.zrangebyscore(this.#setKey(binding), Date.now(), '+inf', 'LIMIT', start, limit + 1);
    const page = ids.slice(0, limit);
    const docs = await Promise.all(page.map((id) => this.redis.hget(this.#key(id), 'doc')));
    const tasks = docs.filter((d): d is string => d !== null).map((d) => JSON.parse(d) as TaskRecord);
    return ids.length > limit ? { tasks, nextCursor: encodeCursor(start + limit) } : { tasks };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  #key(taskId: string): string {
    return `${this.keyPrefix}task:${taskId}`;
  }

  #setKey(binding: string): string {
    return `${this.keyPrefix}tasks:${createHash('sha256').update(binding).digest('base64url')}`;
  }
}
