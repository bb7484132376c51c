import type { RedisClient } from './connection.js';

/**
 * A Lua script as a command of `redis`, typed as `F` by the store that runs it: ioredis sends it by
 * its SHA (EVALSHA) and loads it again when a server does not know it (NOSCRIPT), as after a
 * failover. ioredis adds such a command to the client untyped; this is the one place it is cast.
 */
export function luaCommand<F>(redis: RedisClient, name: string, lua: string, numberOfKeys: number): F {
  redis.defineCommand(name, { numberOfKeys, lua });
  const command = (redis as unknown as Record<string, (...args: unknown[]) => unknown>)[name];
  if (!command) throw new Error(`ioredis did not define the command ${name}`);
  return command.bind(redis) as F;
}
