import { createHash } from 'node:crypto';
import { END_RESERVE_BYTES, readTaskRecord, recordBytes, taskLimit, writeTaskRecord } from '../contracts/task-store.js';
import type { TaskBounds, TaskPage, TaskRecord, TaskStatus, TaskStore } from '../contracts/task-store.js';
import type { RedisClient } from '../redis/connection.js';
import { decodeCursor, encodeCursor } from './task-cursor.js';
import { luaCommand } from '../redis/lua-command.js';

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
 * Admits a new task into its binding: KEYS[1] the binding's live task ids scored by expiry,
 * KEYS[2] the bytes each is charged (field '*': their sum). Expired members leave both first.
 * ARGV: now, expiresAt, taskId, bytes, maxPerPrincipal, maxBytesPerPrincipal.
 * Returns 0 (admitted), 1 (too many tasks) or 2 (too many bytes).
 */
const ADMIT = `
local now, size = tonumber(ARGV[1]), tonumber(ARGV[4])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #expired > 0 then
  local freed = 0
  for _, id in ipairs(expired) do
    local b = redis.call('HGET', KEYS[2], id)
    if b then
      freed = freed + tonumber(b)
      redis.call('HDEL', KEYS[2], id)
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if freed > 0 then redis.call('HINCRBY', KEYS[2], '*', -freed) end
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 1 end
if tonumber(redis.call('HGET', KEYS[2], '*') or '0') + size > tonumber(ARGV[6]) then return 2 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], size)
redis.call('HINCRBY', KEYS[2], '*', size)
local ttl = tonumber(ARGV[2]) - now
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIREAT', KEYS[i], ARGV[2]) end
end
return 0`;

/**
 * Charges a task (KEYS[1]: its binding's bytes) the size of its next record, if larger than
 * its charge so far. ARGV: taskId, bytes, maxBytes. Returns 0 when that passes maxBytes.
 */
const CHARGE = `
local charged = redis.call('HGET', KEYS[1], ARGV[1])
if not charged then return 1 end
local size = tonumber(ARGV[2])
charged = tonumber(charged)
if size <= charged then return 1 end
if tonumber(redis.call('HGET', KEYS[1], '*') or '0') - charged + size > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], size)
redis.call('HINCRBY', KEYS[1], '*', size - charged)
return 1`;

/** Forgets a binding (KEYS: its ids, its bytes); returns the ids it held. */
const DROP = `
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1], KEYS[2])
return ids`;

type Script = (...args: Array<string | number>) => Promise<unknown>;

/**
 * Tasks in Redis, for every replica. A task is a hash `${prefix}task:<id>` (status, doc: the
 * record as JSON) that Redis expires at creation + ttl (PEXPIREAT): no replica keeps a timer.
 * Each binding has a sorted set `${prefix}tasks:{<digest>}` of its live tasks scored by expiry,
 * which bounds and lists them, and beside it (same hash tag, so one Cluster slot)
 * `${prefix}tasks:{<digest>}:bytes`, the bytes each is charged, which bounds their size. Every
 * command touches one task key or one binding's keys, so a Redis Cluster takes them as they are.
 */
export class RedisTaskStore implements TaskStore {
  readonly #admit: Script;
  readonly #charge: Script;
  readonly #drop: Script;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.#admit = luaCommand<Script>(redis, 'mcpgwTaskAdmit', ADMIT, 2);
    this.#charge = luaCommand<Script>(redis, 'mcpgwTaskCharge', CHARGE, 1);
    this.#drop = luaCommand<Script>(redis, 'mcpgwTaskDrop', DROP, 2);
  }

  async create(record: TaskRecord, bounds: TaskBounds): Promise<void> {
    const doc = writeTaskRecord(record);
    const expiresAt = record.createdAt + record.ttlMs;
    const [ids, bytes] = this.#bindingKeys(record.binding);
    const { maxPerPrincipal, maxBytesPerPrincipal } = bounds;
    const size = recordBytes(doc) + END_RESERVE_BYTES;
    const admitted = Number(
      await this.#admit(ids, bytes, Date.now(), expiresAt, record.taskId, size, maxPerPrincipal, maxBytesPerPrincipal),
    );
    if (admitted === 1) throw taskLimit('maxPerPrincipal', maxPerPrincipal);
    if (admitted === 2) throw taskLimit('maxBytesPerPrincipal', maxBytesPerPrincipal);
    const key = this.#key(record.taskId);
    await this.redis.multi().hset(key, 'status', record.status, 'doc', doc).pexpireat(key, expiresAt).exec();
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const doc = await this.redis.hget(this.#key(taskId), 'doc');
    return doc === null ? undefined : readTaskRecord(doc);
  }

  async transition(
    next: TaskRecord,
    from: readonly TaskStatus[],
    maxBytes = Number.MAX_SAFE_INTEGER,
  ): Promise<boolean> {
    const doc = writeTaskRecord(next);
    // Charged first, on the binding's slot, then swapped on the task's: a swap that loses its
    // race leaves the charge high, never low, until the task expires.
    const bytes = this.#bindingKeys(next.binding)[1];
    const charged = Number(await this.#charge(bytes, next.taskId, recordBytes(doc), maxBytes));
    if (charged === 0) throw taskLimit('maxBytesPerPrincipal', maxBytes);
    const applied = await this.redis.eval(TRANSITION, 1, this.#key(next.taskId), next.status, doc, ...from);
    return Number(applied) === 1;
  }

  async list(binding: string, cursor: string | undefined, limit: number): Promise<TaskPage | undefined> {
    const start = cursor === undefined ? 0 : decodeCursor(cursor);
    if (start === undefined) return undefined;
    const [set] = this.#bindingKeys(binding);
    const ids = await this.redis.zrangebyscore(set, Date.now(), '+inf', 'LIMIT', start, limit + 1);
    const page = ids.slice(0, limit);
    const docs = await Promise.all(page.map((id) => this.redis.hget(this.#key(id), 'doc')));
    const tasks = docs.filter((d): d is string => d !== null).map(readTaskRecord);
    return ids.length > limit ? { tasks, nextCursor: encodeCursor(start + limit) } : { tasks };
  }

  async dropBinding(binding: string): Promise<void> {
    const ids = (await this.#drop(...this.#bindingKeys(binding))) as string[];
    // One key per command: each task's key is in a slot of its own.
    if (ids.length > 0) await Promise.all(ids.map((id) => this.redis.del(this.#key(id))));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  #key(taskId: string): string {
    return `${this.keyPrefix}task:${taskId}`;
  }

  #bindingKeys(binding: string): [string, string] {
    const set = `${this.keyPrefix}tasks:{${createHash('sha256').update(binding).digest('base64url')}}`;
    return [set, `${set}:bytes`];
  }
}
