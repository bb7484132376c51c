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
    expect(config.sessions).toEqual({
      store: 'memory',
      keyPrefix: 'mcpgw:',
      ttlSeconds: 3600,
      cacheMs: 250,
      health: { intervalMs: 2000, timeoutMs: 1000 },
    });
  });

  it('accepts a redis store with a URL', () => {
    const config = resolveConfig(
      { upstreams, sessions: { store: 'redis', redisUrl: 'redis://10.0.0.5:6379/2', keyPrefix: 'gw1:' } },
      {},
    );
    expect(config.sessions).toEqual({
      store: 'redis',
      redisUrl: 'redis://10.0.0.5:6379/2',
      keyPrefix: 'gw1:',
      ttlSeconds: 3600,
      cacheMs: 250,
      health: { intervalMs: 2000, timeoutMs: 1000 },
    });
  });

  it('rejects store: redis without a URL, naming the key', () => {
    expect(problems({ upstreams, sessions: { store: 'redis' } })).toEqual([
      'sessions.redisUrl: is required when sessions.store is "redis" (or set MCPGW_REDIS_URL, or sessions.redis for Sentinel or Cluster)',
    ]);
  });

  it('takes the URL from MCPGW_REDIS_URL, over the file', () => {
    const env = { MCPGW_REDIS_URL: 'rediss://user:pw@redis.internal:6380' };
    expect(resolveConfig({ upstreams, sessions: { store: 'redis' } }, env).sessions.redisUrl).toBe(env.MCPGW_REDIS_URL);
    expect(
      resolveConfig({ upstreams, sessions: { store: 'redis', redisUrl: 'redis://file:6379' } }, env).sessions.redisUrl,
    ).toBe(env.MCPGW_REDIS_URL);
    // Without a sessions section at all.
    expect(resolveConfig({ upstreams }, env).sessions).toMatchObject({
      store: 'memory',
      redisUrl: env.MCPGW_REDIS_URL,
    });
  });

  it('rejects a URL that is not redis:// or rediss://, an unknown store, and braces in the prefix', () => {
    expect(problems({ upstreams, sessions: { store: 'redis', redisUrl: 'http://x:6379' } })).toEqual([
      'sessions.redisUrl: must match pattern "^rediss?://"',
    ]);
    expect(problems({ upstreams, sessions: { store: 'etcd' } })).toEqual([
      'sessions.store: must be one of "memory", "redis"',
    ]);
    expect(problems({ upstreams, sessions: { keyPrefix: 'a{b}:' } })).toEqual([
      'sessions.keyPrefix: must match pattern "^[^{}]*$"',
    ]);
  });

  it('accepts a Sentinel master or a Cluster under sessions.redis instead of a URL', () => {
    const sentinel = {
      sentinels: [
        { host: '10.0.0.7', port: 26379 },
        { host: 'sentinel-2', port: 26379 },
      ],
      name: 'mymaster',
      password: 'pw',
      sentinelPassword: 'spw',
      db: 2,
    };
    expect(resolveConfig({ upstreams, sessions: { store: 'redis', redis: sentinel } }, {}).sessions).toEqual({
      store: 'redis',
      redis: sentinel,
      keyPrefix: 'mcpgw:',
      ttlSeconds: 3600,
      cacheMs: 250,
      health: { intervalMs: 2000, timeoutMs: 1000 },
    });
    const cluster = { cluster: ['10.0.0.1:6379', 'redis-2.internal:7000', '[::1]:7001'], password: 'pw' };
    expect(resolveConfig({ upstreams, sessions: { store: 'redis', redis: cluster } }, {}).sessions.redis).toEqual(
      cluster,
    );
  });

  it('takes sessions.redis passwords from ${VAR}, so secrets stay out of the file', () => {
    const env = { REDIS_PW: 'from-env', SENTINEL_PW: 'sentinel-env' };
    const redis = {
      sentinels: [{ host: 's', port: 26379 }],
      name: 'm',
      password: '${REDIS_PW}',
      sentinelPassword: '${SENTINEL_PW}',
    };
    expect(resolveConfig({ upstreams, sessions: { store: 'redis', redis } }, env).sessions.redis).toMatchObject({
      password: 'from-env',
      sentinelPassword: 'sentinel-env',
    });
    expect(
      problems({ upstreams, sessions: { store: 'redis', redis: { cluster: ['h:1'], password: '${NOPE}' } } }),
    ).toEqual(['sessions.redis.password: environment variable NOPE is not set']);
  });

  it('wants exactly one topology, naming the key at fault', () => {
    const sentinels = [{ host: 's', port: 26379 }];
    expect(
      problems({ upstreams, sessions: { store: 'redis', redisUrl: 'redis://h:6379', redis: { cluster: ['h:7000'] } } }),
    ).toEqual(['sessions.redis: cannot be combined with sessions.redisUrl: configure one Redis topology']);
    expect(
      problems(
        { upstreams, sessions: { store: 'redis', redis: { cluster: ['h:7000'] } } },
        { MCPGW_REDIS_URL: 'redis://h:6379' },
      ),
    ).toEqual([
      'sessions.redis: cannot be combined with sessions.redisUrl (MCPGW_REDIS_URL is set): configure one Redis topology',
    ]);
    expect(
      problems({ upstreams, sessions: { store: 'redis', redis: { sentinels, name: 'm', cluster: ['h:7000'] } } }),
    ).toEqual(['sessions.redis: set either sentinels (with name) or cluster, not both']);
    expect(problems({ upstreams, sessions: { store: 'redis', redis: {} } })).toEqual([
      'sessions.redis: needs sentinels (with name) or cluster',
    ]);
    expect(problems({ upstreams, sessions: { store: 'redis', redis: { sentinels } } })).toEqual([
      'sessions.redis.name: is required with sessions.redis.sentinels (the master group name)',
    ]);
    expect(
      problems({ upstreams, sessions: { store: 'redis', redis: { cluster: ['h:7000'], name: 'm', db: 1 } } }),
    ).toEqual([
      'sessions.redis.name: applies to Sentinel only, not to sessions.redis.cluster',
      'sessions.redis.db: applies to Sentinel only, not to sessions.redis.cluster',
    ]);
  });

  it('rejects malformed sessions.redis entries, naming each', () => {
    expect(
      problems({
        upstreams,
        sessions: { store: 'redis', redis: { cluster: ['h:7000', 'no-port', 'h:99999'], tls: true } },
      }).sort(),
    ).toEqual([
      'sessions.redis.cluster[1]: must be host:port',
      'sessions.redis.cluster[2]: port must be 1-65535',
      'sessions.redis.tls: unknown key',
    ]);
    expect(
      problems({
        upstreams,
        sessions: { store: 'redis', redis: { sentinels: [{ host: 's' }, { host: '', port: 0 }], name: 'm' } },
      }).sort(),
    ).toEqual([
      'sessions.redis.sentinels[0].port: is required',
      'sessions.redis.sentinels[1].host: must NOT have fewer than 1 characters',
      'sessions.redis.sentinels[1].port: must be >= 1',
    ]);
    expect(problems({ upstreams, sessions: { store: 'redis', redis: { sentinels: [], name: 'm' } } })).toEqual([
      'sessions.redis.sentinels: must NOT have fewer than 1 items',
    ]);
  });
});
