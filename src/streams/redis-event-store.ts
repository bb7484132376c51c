import type { JsonRpcMessage } from '../jsonrpc/messages.js';
import { closeRedis, type RedisClient } from '../redis/connection.js';
import type { AppendOptions, EventStore, EventStoreLimits, Replay, StoredEvent } from './event-store.js';
import { luaCommand } from '../redis/lua-command.js';

export interface RedisEventStoreOptions extends EventStoreLimits {
  /** Prefix of every key (no `{` or `}`: the session id is the key's hash tag). */
  keyPrefix?: string;
}

type AppendCommand = (
  key: string,
  index: string,
  onlyIfExists: string,
  maxEvents: number,
  maxAgeMs: number,
  message: string,
  final: string,
) => Promise<[string, string] | null>;

// One round trip, atomic: the new entry names the one before it, so a reader can tell a gap
// (an event it missed) from the next event. Trimmed by length (MAXLEN ~) and by age (MINID ~ on
// Redis's own clock, so replicas' clocks do not matter); the key expires maxAge after its last write.
// Returns {id, previous id}, or nil when ARGV[1] == '1' and the stream does not exist.
const APPEND_SCRIPT = `
if ARGV[1] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return false end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = ''
if last[1] then prev = last[1][1] end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'm', ARGV[4], 'p', prev, 'f', ARGV[5])
local t = redis.call('TIME')
local minid = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[3])
if minid > 0 then redis.call('XTRIM', KEYS[1], 'MINID', '~', string.format('%d', minid)) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
-- The session's index of its streams (same slot), so an ended session's streams can be dropped.
if prev == '' then redis.call('SADD', KEYS[2], KEYS[1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {id, prev}
`;

/**
 * Events in Redis Streams: one stream per SSE stream, `${keyPrefix}{${sessionId}}:events:${streamId}`.
 * Entry fields: `m` the JSON-RPC message ('' for a marker), `p` the previous entry's id, `f` '1'
 * on a stream's final event. The entry id is the event's position. Length is bounded with
 * `MAXLEN ~` (approximate: Redis trims whole macro nodes, so a stream may briefly hold up to about
 * a hundred more), age with `MINID ~` and the key's TTL.
 *
 * Every command and the script touch one key, so it works unchanged on a Cluster. It uses the
 * connection it is given (fail-fast options: see redis/connection.ts) and closes it.
 */
export class RedisEventStore implements EventStore {
  readonly #prefix: string;
  readonly #limits: EventStoreLimits;
  readonly #append: AppendCommand;

  constructor(
    private readonly redis: RedisClient,
    options: RedisEventStoreOptions,
  ) {
    this.#prefix = options.keyPrefix ?? 'mcpgw:';
    if (/[{}]/.test(this.#prefix)) throw new Error('keyPrefix must not contain "{" or "}"');
    this.#limits = { maxEvents: options.maxEvents, maxAgeMs: options.maxAgeMs };
    this.#append = luaCommand<AppendCommand>(redis, 'mcpgwEventAppend', APPEND_SCRIPT, 2);
  }

  async append(
    sessionId: string,
    streamId: string,
    message: JsonRpcMessage | undefined,
    options: AppendOptions = {},
  ): Promise<StoredEvent | undefined> {
    const payload = message === undefined ? '' : JSON.stringify(message);
    const final = options.final ?? false;
    const reply = await this.#append(
      this.#key(sessionId, streamId),
      this.#indexKey(sessionId),
      options.onlyIfExists ? '1' : '0',
      this.#limits.maxEvents,
      this.#limits.maxAgeMs,
      payload,
      final ? '1' : '0',
    );
    if (!reply) return undefined;
    return { position: reply[0], previous: reply[1], message, final };
  }

  async replay(sessionId: string, streamId: string, position: string): Promise<Replay | undefined> {
    // Inclusive of the anchor: it must still be there, else events after it may have been trimmed.
    const entries = (await this.redis.xrange(this.#key(sessionId, streamId), position, '+')) as Array<
      [string, string[]]
    >;
    const first = entries[0];
    if (!first || first[0] !== position) return undefined;
    return { anchor: toEvent(first), events: entries.slice(1).map(toEvent) };
  }

  async touch(sessionId: string, streamId: string): Promise<void> {
    await this.redis.pexpire(this.#key(sessionId, streamId), this.#limits.maxAgeMs);
  }

  async forgetSession(sessionId: string): Promise<void> {
    const index = this.#indexKey(sessionId);
    const keys = await this.redis.smembers(index);
    // One slot (the session's hash tag): a multi-key DEL is legal on a Cluster too.
    await this.redis.del(index, ...keys);
  }

  async close(): Promise<void> {
    await closeRedis(this.redis);
  }

  #indexKey(sessionId: string): string {
    return `${this.#prefix}{${sessionId}}:events`;
  }

  #key(sessionId: string, streamId: string): string {
    return `${this.#prefix}{${sessionId}}:events:${streamId}`;
  }
}

function toEvent([position, fields]: [string, string[]]): StoredEvent {
  let message: JsonRpcMessage | undefined;
  let previous = '';
  let final = false;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const value = fields[i + 1]!;
    switch (fields[i]) {
      case 'm':
        if (value !== '') message = JSON.parse(value) as JsonRpcMessage;
        break;
      case 'p':
        previous = value;
        break;
      case 'f':
        final = value === '1';
        break;
      default:
        break; // a field of a later version: skipped
    }
  }
  return { position, previous, message, final };
}
