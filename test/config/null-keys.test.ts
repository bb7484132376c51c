/**
 * An upstream's `prefix` or `cwd` given as null (a YAML key with no value) is accepted, as it
 * always was, and comes back as not set: the loaded config's types say string or absent.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { resolveConfig } from '../../src/config/load.js';

describe('null keys of an upstream', () => {
  it('a null prefix or cwd is dropped, so the key reads as unset', () => {
    const source = parseYaml(
      [
        'upstreams:',
        '  - { name: a, transport: stdio, command: x, prefix:, cwd: }',
        '  - { name: b, transport: http, url: "https://h.example/mcp", prefix: }',
      ].join('\n'),
    );
    expect(source.upstreams[0]).toMatchObject({ prefix: null, cwd: null });
    const [stdio, http] = resolveConfig(source, {}).upstreams;
    expect(stdio).not.toHaveProperty('prefix');
    expect(stdio).not.toHaveProperty('cwd');
    expect(http).not.toHaveProperty('prefix');
  });

  it('a prefix or cwd that is set stays as it is, the empty prefix too', () => {
    const [a, b] = resolveConfig(
      {
        upstreams: [
          { name: 'a', transport: 'stdio', command: 'x', prefix: '', cwd: '/tmp' },
          { name: 'b', transport: 'http', url: 'https://h.example/mcp', prefix: 'p' },
        ],
      },
      {},
    ).upstreams;
    expect(a).toMatchObject({ prefix: '', cwd: '/tmp' });
    expect(b).toMatchObject({ prefix: 'p' });
  });
});
