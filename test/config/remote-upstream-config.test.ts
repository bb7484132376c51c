/** `transport: http | sse` upstreams in the config: one schema per transport, defaults, ${VAR}, every problem named. */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';

function problems(source: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    resolveConfig(source, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('remote upstream config', () => {
  it('applies the defaults of a remote upstream', () => {
    const c = resolveConfig({ upstreams: [{ name: 'r', transport: 'http', url: 'https://mcp.example/mcp' }] }, {});
    expect(c.upstreams[0]).toEqual({
      name: 'r',
      transport: 'http',
      url: 'https://mcp.example/mcp',
      headers: {},
      connectTimeoutMs: 10000,
      mode: 'shared',
      pool: {
        min: 1,
        spares: 1,
        max: 4,
        maxInFlight: 32,
        maxInFlightBytes: 2097152,
        heavyRequestBytes: 262144,
        queueSize: 1000,
        queueTimeoutMs: 5000,
        idleTimeoutMs: 300000,
        busyAfterMs: 1000,
      },
      timeoutMs: 60000,
      maxTimeoutMs: 600000,
      required: false,
      validateArguments: true,
      protocolVersion: 'auto',
      retry: { attempts: 2, initialDelayMs: 100, maxDelayMs: 2000 },
      breaker: { failureThreshold: 5, openMs: 5000, maxOpenMs: 60000 },
      health: { intervalMs: 30000, timeoutMs: 5000 },
    });
  });

  it('accepts sse and per-session, and substitutes ${VAR} in url and headers', () => {
    const c = resolveConfig(
      {
        upstreams: [
          {
            name: 'r',
            transport: 'sse',
            url: 'http://${HOST}/sse',
            mode: 'per-session',
            headers: { Authorization: 'Bearer ${TOKEN}' },
          },
        ],
      },
      { HOST: '10.0.0.7:9000', TOKEN: 's3cret' },
    );
    expect(c.upstreams[0]).toMatchObject({
      transport: 'sse',
      url: 'http://10.0.0.7:9000/sse',
      mode: 'per-session',
      headers: { Authorization: 'Bearer s3cret' },
    });
  });

  it('takes a whole url from the environment, and checks it once substituted', () => {
    expect(
      resolveConfig(
        { upstreams: [{ name: 'r', transport: 'http', url: '${REMOTE_URL}' }] },
        { REMOTE_URL: 'https://mcp.example/mcp' },
      ).upstreams[0],
    ).toMatchObject({
      url: 'https://mcp.example/mcp',
    });
    expect(
      problems(
        { upstreams: [{ name: 'r', transport: 'http', url: '${REMOTE_URL}' }] },
        { REMOTE_URL: 'file:///etc/passwd' },
      ),
    ).toEqual(['upstreams[0].url: must be an http or https URL']);
  });

  it('checks a remote upstream against its own schema only, naming every problem', () => {
    const p = problems(
      {
        upstreams: [
          { name: 'a', transport: 'http', command: 'node', url: 'ftp://x' },
          { name: 'b', transport: 'http' },
          {
            name: 'c',
            transport: 'sse',
            url: 'https://user:pw@x/sse',
            headers: { 'Mcp-Session-Id': 'x', Token: '${UNSET_TOKEN}' },
          },
          {
            name: 'd',
            transport: 'http',
            url: 'https://x/mcp',
            breaker: { openMs: 10, maxOpenMs: 5 },
            retry: { attempts: -1 },
          },
          { name: 'e', transport: 'carrier-pigeon', url: 'https://x' },
          { name: 'f', transport: 'stdio', command: 'node', url: 'https://x' },
        ],
      },
      {},
    );
    expect(p).toEqual(
      expect.arrayContaining([
        'upstreams[0].command: unknown key',
        'upstreams[0].url: must be an http or https URL',
        'upstreams[1].url: is required',
        'upstreams[2].url: must not carry credentials (use headers)',
        'upstreams[2].headers.Mcp-Session-Id: is set by the gateway and cannot be configured',
        'upstreams[2].headers.Token: environment variable UNSET_TOKEN is not set',
        'upstreams[3].breaker.openMs: must be <= breaker.maxOpenMs (5)',
        'upstreams[3].retry.attempts: must be >= 0',
        'upstreams[4].transport: must be one of "stdio", "http", "sse"',
        'upstreams[5].url: unknown key',
      ]),
    );
    expect(p.join('\n')).not.toMatch(/discriminator|oneOf|tag/);
  });
});
