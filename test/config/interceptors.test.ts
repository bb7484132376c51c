/** `interceptors` (top level and per virtual server): what a config may say, refused at load with the key named. */
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';

const upstreams = [{ name: 'echo', transport: 'stdio', command: 'node' }];

function problems(config: Record<string, unknown>): string[] {
  try {
    resolveConfig({ upstreams, ...config }, {});
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('interceptors: refused at load', () => {
  it.each([
    ['an unknown interceptor', [{ name: 'virus-scan' }], 'name'],
    ['an unknown action', [{ name: 'secrets', action: 'quarantine' }], 'action'],
    ['an unknown mode', [{ name: 'pii', mode: 'shadow' }], 'mode'],
    ['size without maxBytes', [{ name: 'size' }], 'size needs maxBytes'],
    ['maxBytes on another interceptor', [{ name: 'secrets', maxBytes: 10 }], 'maxBytes is for size only'],
    ['a zero maxBytes', [{ name: 'size', maxBytes: 0 }], 'maxBytes'],
    ['no phase at all', [{ name: 'pii', phases: [] }], 'phases'],
  ])('%s', (_, interceptors, named) => {
    const found = problems({ interceptors });
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toContain(named);
  });

  it("names the virtual server's entry", () => {
    const found = problems({ servers: [{ path: '/a', interceptors: [{ name: 'size' }] }] });
    expect(found).toContain('servers[0].interceptors[0]: size needs maxBytes');
  });

  it('takes the defaults: redact, on, both phases', () => {
    const config = resolveConfig({ upstreams, interceptors: [{ name: 'secrets' }] }, {});
    expect(config.interceptors).toEqual([
      { name: 'secrets', action: 'redact', mode: 'on', phases: ['request', 'response'], allowFields: [] },
    ]);
  });
});
