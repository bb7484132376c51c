/** The keys of the connection transports: on by default, `false` turns each off, bad values named. */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { legacySseSettings, websocketSettings } from '../../src/config/server.js';

const UPSTREAMS = [{ name: 'e', transport: 'stdio', command: 'node' }];

function problems(source: Record<string, unknown>): string[] {
  try {
    resolveConfig({ upstreams: UPSTREAMS, ...source }, {});
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
}

describe('legacySse and websocket config', () => {
  it('are on with their defaults when not named', () => {
    const config = resolveConfig({ upstreams: UPSTREAMS }, {});
    expect(legacySseSettings(config.legacySse)).toEqual({ ssePath: '/sse', messagesPath: '/messages', graceMs: 2000 });
    expect(websocketSettings(config.websocket, config.limits.maxStreamBufferedBytes)).toEqual({
      path: '/ws',
      maxBufferedBytes: 4194304,
      pingIntervalMs: 30000,
    });
  });

  it('bound WebSocket by limits.maxStreamBufferedBytes, unless websocket.maxBufferedBytes (its older spelling) is set', () => {
    const shared = resolveConfig({ upstreams: UPSTREAMS, limits: { maxStreamBufferedBytes: 65536 } }, {});
    expect(websocketSettings(shared.websocket, shared.limits.maxStreamBufferedBytes)?.maxBufferedBytes).toBe(65536);
    const own = resolveConfig(
      { upstreams: UPSTREAMS, limits: { maxStreamBufferedBytes: 65536 }, websocket: { maxBufferedBytes: 8192 } },
      {},
    );
    expect(websocketSettings(own.websocket, own.limits.maxStreamBufferedBytes)?.maxBufferedBytes).toBe(8192);
  });

  it('take false (off) and partial objects', () => {
    const config = resolveConfig({ upstreams: UPSTREAMS, legacySse: false, websocket: { path: '/socket' } }, {});
    expect(legacySseSettings(config.legacySse)).toBeUndefined();
    expect(websocketSettings(config.websocket, config.limits.maxStreamBufferedBytes)).toMatchObject({
      path: '/socket',
      pingIntervalMs: 30000,
    });
  });

  it('refuse what they cannot be', () => {
    expect(problems({ legacySse: true })).not.toEqual([]);
    expect(problems({ legacySse: { ssePath: 'sse' } }).join('\n')).toContain('legacySse.ssePath');
    expect(problems({ websocket: { maxBufferedBytes: 10 } }).join('\n')).toContain('websocket.maxBufferedBytes');
    expect(problems({ websocket: { nope: 1 } }).join('\n')).toContain('websocket.nope: unknown key');
  });
});
