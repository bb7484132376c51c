/** The pure comparison a reload applies (config/diff.ts): what changes live, what waits for a restart. */
import { describe, expect, it } from 'vitest';
import { diffConfigs, hasLiveChanges } from '../../src/config/diff.js';
import { resolveConfig } from '../../src/config/load.js';

const upstream = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  transport: 'stdio',
  command: 'node',
  args: [`${name}.mjs`],
  ...extra,
});
const load = (source: Record<string, unknown>) =>
  resolveConfig({ upstreams: [upstream('a'), upstream('b')], ...source }, {});

describe('config diff', () => {
  it('finds nothing between a config and itself', () => {
    const diff = diffConfigs(load({}), load({}));
    expect(hasLiveChanges(diff)).toBe(false);
    expect(diff.restartOnly).toEqual([]);
  });

  it('tells added, removed, worker and policy changes of upstreams apart', () => {
    const next = load({ upstreams: [upstream('b', { args: ['other.mjs'] }), upstream('c'), upstream('d')] });
    const diff = diffConfigs(load({ upstreams: [upstream('a'), upstream('b'), upstream('d')] }), next);
    expect(diff.added.map((u) => u.name)).toEqual(['c']);
    expect(diff.removed).toEqual(['a']);
    expect(diff.changed).toEqual([{ name: 'b', kind: 'workers', keys: ['args'] }]);
  });

  it('keeps workers when only how the gateway uses them changes (filter, timeouts, prefix)', () => {
    const next = load({
      upstreams: [upstream('a', { tools: { deny: ['x'] }, timeoutMs: 5000, prefix: 'p' }), upstream('b')],
    });
    const diff = diffConfigs(load({}), next);
    expect(diff.changed).toEqual([{ name: 'a', kind: 'policy', keys: ['prefix', 'timeoutMs', 'tools'] }]);
  });

  it('an env change of an upstream replaces its workers', () => {
    const diff = diffConfigs(load({}), load({ upstreams: [upstream('a', { env: { X: '1' } }), upstream('b')] }));
    expect(diff.changed).toEqual([{ name: 'a', kind: 'workers', keys: ['env'] }]);
  });

  it('names restart-only keys by their dotted path, live limits apart', () => {
    const next = load({
      listen: { port: 9999 },
      sessions: { ttlSeconds: 5 },
      limits: { maxBatchSize: 7, bodyBytes: 2048 },
      logLevel: 'debug',
    });
    const diff = diffConfigs(load({}), next);
    expect(diff.restartOnly.sort()).toEqual(['limits.bodyBytes', 'listen.port', 'sessions.ttlSeconds']);
    expect(diff.limits).toEqual(['maxBatchSize']);
    expect(diff.logLevel).toBe(true);
    expect(hasLiveChanges(diff)).toBe(true);
  });

  it('a restart-only change alone has nothing live to apply', () => {
    const diff = diffConfigs(load({}), load({ path: '/other', auth: { mode: 'none' } }));
    expect(diff.restartOnly).toEqual(['path']);
    expect(hasLiveChanges(diff)).toBe(false);
  });

  it("the main path's toolSearch applies live", () => {
    const on = load({ toolSearch: { enabled: true, pinned: ['a__*'] } });
    for (const [from, to] of [
      [load({}), on],
      [on, load({ toolSearch: { enabled: true, pinned: ['a__*'], maxResults: 3 } })],
      [on, load({})],
    ] as const) {
      const diff = diffConfigs(from, to);
      expect(diff.toolSearch).toBe(true);
      expect(diff.restartOnly).toEqual([]);
      expect(hasLiveChanges(diff)).toBe(true);
    }
    expect(diffConfigs(on, load({ toolSearch: { enabled: true, pinned: ['a__*'] } })).toolSearch).toBe(false);
  });
});
