import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';

const upstreams = [{ name: 'echo', transport: 'stdio', command: 'node' }];

function problems(source: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    resolveConfig(source, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('sessions config', () => {
  it('defaults to the memory store with the mcpgw: key prefix', () => {
    const config = resolveConfig({ upstreams }, {});
    expect(config.sessions).toEqual({ store: 'memory', keyPrefix: 'mcpgw:', ttlSeconds: 3600 });
  });

  it('accepts a redis store with a URL', () => {
    const config = resolveConfig({ upstreams, sessions: { store: 'redis', redisUrl: 'redis://10.0.0.5:6379/2', keyPrefix: 'gw1:' } }, {});
    expect(config.sessions).toEqual({ store: 'redis', redisUrl: 'redis://10.0.0.5:6379/2', keyPrefix: 'gw1:', ttlSeconds: 3600 });
  });

  it('rejects store: redis without a URL, naming the key', () => {
    expect(problems({ upstreams, sessions: { store: 'redis' } })).toEqual([
      'sessions.redisUrl: is required when sessions.store is "redis" (or set MCPGW_REDIS_URL)',
    ]);
  });

  it('takes the URL from MCPGW_REDIS_URL, over the file', () => {
    const env = { MCPGW_REDIS_URL: 'rediss://user:pw@redis.internal:6380' };
    expect(resolveConfig({ upstreams, sessions: { store: 'redis' } }, env).sessions.redisUrl).toBe(env.MCPGW_REDIS_URL);
    expect(resolveConfig({ upstreams, sessions: { store: 'redis', redisUrl: 'redis://file:6379' } }, env).sessions.redisUrl).toBe(
      env.MCPGW_REDIS_URL,
    );
    // Without a sessions section at all.
    expect(resolveConfig({ upstreams }, env).sessions).toMatchObject({ store: 'memory', redisUrl: env.MCPGW_REDIS_URL });
  });

  it('rejects a URL that is not redis:// or rediss://, an unknown store, and braces in the prefix', () => {
    expect(problems({ upstreams, sessions: { store: 'redis', redisUrl: 'http://x:6379' } })).toEqual([
      'sessions.redisUrl: must match pattern "^rediss?://"',
    ]);
    expect(problems({ upstreams, sessions: { store: 'etcd' } })).toEqual(['sessions.store: must be one of "memory", "redis"']);
    expect(problems({ upstreams, sessions: { keyPrefix: 'a{b}:' } })).toEqual(['sessions.keyPrefix: must match pattern "^[^{}]*$"']);
  });
});
