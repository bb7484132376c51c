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

describe('interceptor servers (server:): refused at load', () => {
  const stdio = { command: 'node', args: ['examples/interceptors/word-filter.mjs'] };
  it.each([
    ['both server kinds', [{ name: 'w', server: { ...stdio, url: 'http://127.0.0.1:1/mcp' }, events: ['tools/call'] }]],
    ['neither server kind', [{ name: 'w', server: {}, events: ['tools/call'] }]],
    ['an unknown event', [{ name: 'w', server: stdio, events: ['roots/list'] }]],
    ['no events', [{ name: 'w', server: stdio }]],
    ["a built-in's key on a server", [{ name: 'w', server: stdio, events: ['tools/call'], action: 'block' }]],
    ["a server's key on a built-in", [{ name: 'pii', onError: 'allow' }]],
    ['an unknown onError', [{ name: 'w', server: stdio, events: ['tools/call'], onError: 'maybe' }]],
    ['a timeout past 60 s', [{ name: 'w', server: stdio, events: ['tools/call'], timeoutMs: 600000 }]],
    ['a URL that is not http', [{ name: 'w', server: { url: 'ftp://127.0.0.1/mcp' }, events: ['tools/call'] }]],
    ['an unset ${VAR}', [{ name: 'w', server: { command: '${NO_SUCH_VAR}' }, events: ['tools/call'] }]],
  ])('%s', (_, interceptors) => {
    const found = problems({ interceptors });
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toContain('interceptors[0]');
  });

  it('takes the defaults: deny, 2000 ms, on; no built-in keys added', () => {
    const entry = { name: 'w', server: { url: 'http://127.0.0.1:9/mcp' }, events: ['tools/call'] };
    const config = resolveConfig({ upstreams, interceptors: [entry] }, {});
    expect(config.interceptors).toEqual([{ ...entry, onError: 'deny', timeoutMs: 2000, mode: 'on' }]);
  });
});
