/** The config keys of tasks: `upstreams[].tasks` and the top-level `tasks:`, their bad values named. */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { taskSupportOf } from '../../src/config/tasks.js';

const upstream = (tasks: unknown) => ({ name: 'u', transport: 'stdio', command: 'x', tasks });

function problems(source: Record<string, unknown>): string[] {
  try {
    resolveConfig(source, {});
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('tasks config', () => {
  it('accepts tool globs and limits, with defaults', () => {
    const config = resolveConfig(
      { upstreams: [upstream({ tools: ['slow_*'], requiredTools: ['build'] })], tasks: { maxPerPrincipal: 5 } },
      {},
    );
    expect(config.tasks).toMatchObject({ maxPerPrincipal: 5, defaultTtlMs: 3600000, pollIntervalMs: 1000 });
    const support = taskSupportOf(config.upstreams[0]!.tasks);
    expect([support('slow_x'), support('build'), support('greet')]).toEqual(['optional', 'required', undefined]);
  });

  it('names unknown keys, bad values and a default ttl over the maximum', () => {
    expect(problems({ upstreams: [upstream({ tool: ['x'] })] }).join('\n')).toMatch(/tool/);
    expect(problems({ upstreams: [upstream({ tools: [''] })] }).length).toBeGreaterThan(0);
    expect(problems({ upstreams: [upstream({})], tasks: { maxPerPrincipal: 0 } }).join('\n')).toMatch(
      /maxPerPrincipal/,
    );
    expect(problems({ upstreams: [upstream({})], tasks: { defaultTtlMs: 10_000, maxTtlMs: 5000 } }).join('\n')).toMatch(
      /tasks\.defaultTtlMs/,
    );
    expect(problems({ upstreams: [upstream({})], tasks: { ttl: 1 } }).join('\n')).toMatch(/ttl/);
  });
});
