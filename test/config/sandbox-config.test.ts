/** `upstreams[].sandbox`: its defaults, and every bad input named by its path. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffConfigs } from '../../src/config/diff.js';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import type { StdioUpstreamConfig } from '../../src/config/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'mcpgw-sbx-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stdio = (extra: Record<string, unknown>) => ({ name: 'e', transport: 'stdio', command: 'node', ...extra });

function problems(upstream: Record<string, unknown>): string[] {
  try {
    resolveConfig({ upstreams: [upstream] }, {});
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('upstreams[].sandbox', () => {
  it('is absent unless given; an empty one is network none, no binds, no variables', () => {
    const plain = resolveConfig({ upstreams: [stdio({})] }, {}).upstreams[0] as StdioUpstreamConfig;
    expect(plain.sandbox).toBeUndefined();
    const boxed = resolveConfig({ upstreams: [stdio({ sandbox: {} })] }, {}).upstreams[0] as StdioUpstreamConfig;
    expect(boxed.sandbox).toEqual({ network: 'none', readOnly: [], writable: [], env: [] });
  });

  it('accepts existing absolute paths, a cwd and a command inside them', () => {
    expect(
      problems(stdio({ command: '/usr/bin/env', cwd: dir, sandbox: { readOnly: [dir], writable: ['/tmp'] } })),
    ).toEqual([]);
  });

  it('names a path that does not exist, and one that is not absolute', () => {
    expect(problems(stdio({ sandbox: { readOnly: [join(dir, 'missing')], writable: ['relative/dir'] } }))).toEqual([
      `upstreams[0].sandbox.readOnly[0]: "${join(dir, 'missing')}" does not exist`,
      'upstreams[0].sandbox.writable[0]: "relative/dir" is not an absolute path',
    ]);
  });

  it('refuses the whole filesystem writable', () => {
    expect(problems(stdio({ sandbox: { writable: ['/'] } }))).toEqual([
      'upstreams[0].sandbox.writable[0]: "/" would make the whole filesystem writable',
    ]);
  });

  it('names a cwd or a command the sandbox would not contain', () => {
    expect(problems(stdio({ cwd: dir, sandbox: {} }))).toEqual([
      `upstreams[0].cwd: "${dir}" is not inside the sandbox (add it, or a directory above it, to sandbox.readOnly)`,
    ]);
    expect(problems(stdio({ command: join(dir, 'server'), sandbox: {} }))).toEqual([
      `upstreams[0].command: "${join(dir, 'server')}" is not inside the sandbox (add its directory to sandbox.readOnly)`,
    ]);
    // /tmp is the private tmpfs: its own path is there, the host's directories below it are not.
    expect(problems(stdio({ cwd: '/tmp', sandbox: {} }))).toEqual([]);
    expect(problems(stdio({ cwd: dir, sandbox: { writable: [dir] } }))).toEqual([]);
  });

  it('names an unknown network, an unknown key, a variable name that cannot be one', () => {
    expect(problems(stdio({ sandbox: { network: 'bridge' } }))).toEqual([
      'upstreams[0].sandbox.network: must be one of "none", "loopback", "host"',
    ]);
    expect(problems(stdio({ sandbox: { mounts: [] } }))).toEqual(['upstreams[0].sandbox.mounts: unknown key']);
    expect(problems(stdio({ sandbox: { env: ['OK_NAME', 'NOT-A-NAME'] } }))).toEqual([
      expect.stringMatching(/^upstreams\[0\]\.sandbox\.env\[1\]: must match pattern/),
    ]);
  });

  it('is a config error on a remote upstream', () => {
    const remote = { name: 'r', transport: 'http', url: 'http://127.0.0.1:1/mcp', sandbox: {} };
    expect(problems(remote)).toContain(
      'upstreams[0].sandbox: only a stdio upstream runs in a sandbox (this one is http)',
    );
  });
});

describe('a reload changing sandbox', () => {
  it('replaces the workers (a sandbox is part of what they are), and adding one too', () => {
    const before = resolveConfig({ upstreams: [stdio({})] }, {});
    const boxed = resolveConfig({ upstreams: [stdio({ sandbox: {} })] }, {});
    const hosted = resolveConfig({ upstreams: [stdio({ sandbox: { network: 'host' } })] }, {});
    expect(diffConfigs(before, boxed).changed).toEqual([{ name: 'e', kind: 'workers', keys: ['sandbox'] }]);
    expect(diffConfigs(boxed, hosted).changed).toEqual([{ name: 'e', kind: 'workers', keys: ['sandbox'] }]);
    expect(diffConfigs(boxed, boxed).changed).toEqual([]);
  });
});
