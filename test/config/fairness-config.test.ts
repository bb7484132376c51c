/**
 * upstreams[].fairness as the config check (--check, a reload) takes it: its bounds, its default
 * queue, unknown keys, and a change of it is a policy change (the workers stay).
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { diffConfigs } from '../../src/config/diff.js';

const withFairness = (fairness: unknown) => ({
  upstreams: [{ name: 'a', transport: 'stdio', command: process.execPath, fairness }],
});

/** The problems the config check names, or [] when it passes. */
function problems(fairness: unknown): string[] {
  try {
    resolveConfig(withFairness(fairness), {});
    return [];
  } catch (err) {
    return (err as Error).message.split('\n').slice(1);
  }
}

describe('upstreams[].fairness', () => {
  it('takes maxInFlightPerPrincipal, with queue 32 unless set', () => {
    expect(resolveConfig(withFairness({ maxInFlightPerPrincipal: 4 }), {}).upstreams[0]!.fairness).toEqual({
      maxInFlightPerPrincipal: 4,
      queue: 32,
    });
    expect(resolveConfig(withFairness({ maxInFlightPerPrincipal: 1, queue: 0 }), {}).upstreams[0]!.fairness).toEqual({
      maxInFlightPerPrincipal: 1,
      queue: 0,
    });
    expect(resolveConfig(withFairness(undefined), {}).upstreams[0]!.fairness).toBeUndefined();
  });

  it.each([
    [{ maxInFlightPerPrincipal: 0 }, 'upstreams[0].fairness.maxInFlightPerPrincipal: must be >= 1'],
    [{ maxInFlightPerPrincipal: 2.5 }, 'upstreams[0].fairness.maxInFlightPerPrincipal: must be integer'],
    [{ maxInFlightPerPrincipal: '4' }, 'upstreams[0].fairness.maxInFlightPerPrincipal: must be integer'],
    [{ maxInFlightPerPrincipal: 4, queue: -1 }, 'upstreams[0].fairness.queue: must be >= 0'],
    [{ maxInFlightPerPrincipal: 4, queue: 1.5 }, 'upstreams[0].fairness.queue: must be integer'],
    [{ queue: 3 }, 'upstreams[0].fairness.maxInFlightPerPrincipal: is required'],
    [{ maxInFlightPerPrincipal: 4, perPrincipal: 1 }, 'upstreams[0].fairness.perPrincipal: unknown key'],
    [4, 'upstreams[0].fairness: must be object'],
  ])('refuses %j, naming the key', (fairness, problem) => {
    expect(problems(fairness)).toContain(`  - ${problem}`);
  });

  it('a reload that sets, changes or removes it keeps the workers (a policy key)', () => {
    const before = resolveConfig(withFairness(undefined), {});
    const set = resolveConfig(withFairness({ maxInFlightPerPrincipal: 4 }), {});
    const changed = resolveConfig(withFairness({ maxInFlightPerPrincipal: 2, queue: 1 }), {});
    for (const [a, b] of [
      [before, set],
      [set, changed],
      [changed, before],
    ] as const)
      expect(diffConfigs(a, b).changed).toEqual([{ name: 'a', kind: 'policy', keys: ['fairness'] }]);
  });
});
