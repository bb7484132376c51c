/**
 * The bwrap command line of a sandboxed stdio upstream (upstream/sandbox-argv.ts): what it
 * unshares, mounts and passes, read from the argv; then the argv run by the real bwrap, to see
 * the filesystem and environment a child gets.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeRuntimeDir, type SandboxConfig } from '../../src/config/sandbox.js';
import { bwrapArgs, type HostLayout } from '../../src/upstream/sandbox-argv.js';
import { locateBwrap } from '../../src/upstream/sandbox-probe.js';
import { launchOf } from '../../src/upstream/wires/stdio-launch.js';
import { exampleConfig, stdioUpstream } from '../support/gateway.js';
import type { StdioUpstreamConfig } from '../../src/config/schema.js';

const MERGED: HostLayout = {
  systemDirs: [{ path: '/usr' }, { path: '/bin', link: 'usr/bin' }, { path: '/lib', link: 'usr/lib' }],
};

const sandbox = (s: Partial<SandboxConfig> = {}): SandboxConfig => ({
  network: 'none',
  readOnly: [],
  writable: [],
  env: [],
  ...s,
});

const cmd = (s: Partial<SandboxConfig> = {}, extra: { cwd?: string; env?: Record<string, string> } = {}) => ({
  command: 'node',
  args: ['server.mjs', '--flag'],
  env: extra.env ?? {},
  sandbox: sandbox(s),
  ...(extra.cwd ? { cwd: extra.cwd } : {}),
});

/** The pairs that follow each occurrence of `flag`. */
function operands(args: string[], flag: string, n = 2): string[][] {
  return args.flatMap((a, i) => (a === flag ? [args.slice(i + 1, i + 1 + n)] : []));
}

describe('bwrapArgs', () => {
  it('unshares every namespace, the network too, drops capabilities, dies with its parent, in a new session', () => {
    const { args } = bwrapArgs(cmd(), {}, MERGED);
    expect(args.slice(0, 2)).toEqual(['--unshare-all', '--unshare-user']);
    expect(args).not.toContain('--share-net');
    for (const flag of ['--die-with-parent', '--new-session']) expect(args).toContain(flag);
    expect(operands(args, '--cap-drop', 1)).toEqual([['ALL']]);
  });

  it('network loopback is the same private namespace as none; host shares the network', () => {
    expect(bwrapArgs(cmd({ network: 'loopback' }), {}, MERGED).args).toEqual(bwrapArgs(cmd(), {}, MERGED).args);
    const host = bwrapArgs(cmd({ network: 'host' }), {}, MERGED).args;
    expect(host).toContain('--share-net');
    expect(host.filter((a) => a !== '--share-net')).toEqual(bwrapArgs(cmd(), {}, MERGED).args);
  });

  it('mounts the system read-only (symlinks as symlinks), /etc essentials if present, node, proc, dev, a private /tmp', () => {
    const { args } = bwrapArgs(cmd(), {}, { ...MERGED, runtimeDir: '/opt/node-v22' });
    expect(operands(args, '--ro-bind')).toEqual([
      ['/usr', '/usr'],
      ['/opt/node-v22', '/opt/node-v22'],
    ]);
    expect(operands(args, '--symlink')).toEqual([
      ['usr/bin', '/bin'],
      ['usr/lib', '/lib'],
    ]);
    const etc = operands(args, '--ro-bind-try').map(([from]) => from);
    expect(etc).toEqual(expect.arrayContaining(['/etc/ld.so.cache', '/etc/ssl', '/etc/resolv.conf', '/etc/passwd']));
    expect(etc.every((p) => p.startsWith('/etc/'))).toBe(true);
    expect(operands(args, '--proc', 1)).toEqual([['/proc']]);
    expect(operands(args, '--dev', 1)).toEqual([['/dev']]);
    expect(operands(args, '--tmpfs', 1)).toEqual([['/tmp']]);
    expect(args).not.toContain('--bind');
    // A node under /tmp (a CI checkout's .tools/) is bound after the private /tmp, not hidden by it.
    const underTmp = bwrapArgs(cmd(), {}, { ...MERGED, runtimeDir: '/tmp/ci/.tools/node' }).args;
    expect(underTmp.indexOf('/tmp/ci/.tools/node')).toBeGreaterThan(underTmp.indexOf('--tmpfs'));
  });

  it('binds readOnly and writable after /tmp, outer paths first, whichever list they are in', () => {
    const { args } = bwrapArgs(
      cmd({ readOnly: ['/srv/app/data/ro', '/srv/app'], writable: ['/srv/app/data', '/tmp/out', '/var/x/'] }),
      {},
      MERGED,
    );
    const tmpfs = args.indexOf('--tmpfs');
    const binds = args.flatMap((a, i) =>
      (a === '--ro-bind' || a === '--bind') && i > tmpfs ? [`${a} ${args[i + 1]}`] : [],
    );
    expect(binds).toEqual([
      '--ro-bind /srv/app',
      '--bind /tmp/out',
      '--bind /var/x/',
      '--bind /srv/app/data',
      '--ro-bind /srv/app/data/ro',
    ]);
    expect(operands(args, '--bind')).toContainEqual(['/var/x/', '/var/x/']);
  });

  it('ends with the working directory (/tmp unless cwd), then -- and the command as configured', () => {
    const tail = (a: string[]) => a.slice(a.indexOf('--chdir'));
    expect(tail(bwrapArgs(cmd(), {}, MERGED).args)).toEqual(['--chdir', '/tmp', '--', 'node', 'server.mjs', '--flag']);
    expect(tail(bwrapArgs(cmd({}, { cwd: '/srv/app' }), {}, MERGED).args).slice(0, 2)).toEqual(['--chdir', '/srv/app']);
  });

  it('gives bwrap only PATH, HOME, TMPDIR, the names in sandbox.env and its own env; no value in the argv', () => {
    const gateway = {
      SECRET_TOKEN: 'gateway-secret',
      PASSED: 'passed-value',
      PATH: '/root/bin:/usr/bin',
      HOME: '/root',
    };
    const { args, env } = bwrapArgs(
      cmd({ env: ['PASSED', 'NOT_SET'] }, { env: { OWN: 'own-value' } }),
      gateway,
      MERGED,
    );
    expect(env).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/tmp',
      TMPDIR: '/tmp',
      PASSED: 'passed-value',
      OWN: 'own-value',
    });
    expect(args.join(' ')).not.toMatch(/secret|passed-value|own-value/);
    // The upstream's own env wins, PATH included.
    expect(bwrapArgs(cmd({}, { env: { PATH: '/opt/bin' } }), gateway, MERGED).env.PATH).toBe('/opt/bin');
  });
});

describe('launchOf', () => {
  const [plain] = exampleConfig().upstreams as StdioUpstreamConfig[];

  it('an upstream without sandbox runs its command itself', () => {
    const launch = launchOf(plain!);
    expect(launch.command).toBe(plain!.command);
    expect(launch.args).toEqual(plain!.args);
  });

  it('a sandboxed one runs bwrap from the gateway PATH, the command after --', () => {
    const config = exampleConfig({ upstreams: [stdioUpstream('s', '/usr/share/x.mjs', { sandbox: {} })] });
    const launch = launchOf(config.upstreams[0] as StdioUpstreamConfig);
    expect(launch.command).toBe(locateBwrap());
    expect(launch.args.slice(-3)).toEqual(['--', process.execPath, '/usr/share/x.mjs']);
  });
});

describe('the argv run by the real bwrap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpgw-bwrap-'));
  const hidden = mkdtempSync(join(tmpdir(), 'mcpgw-bwrap-hidden-'));
  writeFileSync(join(dir, 'mine.txt'), 'mine');
  writeFileSync(join(hidden, 'secret.txt'), 'secret');
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(hidden, { recursive: true, force: true });
  });

  const run = (script: string, s: Partial<SandboxConfig>) => {
    const config = exampleConfig({
      upstreams: [{ name: 's', transport: 'stdio', command: 'sh', args: ['-c', script], sandbox: s }],
    });
    const launch = launchOf(config.upstreams[0] as StdioUpstreamConfig);
    return spawnSync(launch.command, launch.args, { env: launch.env, encoding: 'utf8', timeout: 20_000 });
  };

  it('shows the child the system, /etc essentials, /tmp and the bound paths, nothing else; pid 1 is bwrap', () => {
    const r = run(
      `ls /; echo ---; ls /tmp; echo ---; cat ${dir}/mine.txt; echo; echo ---; ls /proc | grep -c "^[0-9]"`,
      {
        readOnly: [dir],
      },
    );
    expect(r.stderr).toBe('');
    const [root, tmp, mine, pids] = r.stdout.split('---\n');
    const top = root!.trim().split('\n');
    expect(top).toEqual(expect.arrayContaining(['usr', 'etc', 'proc', 'dev', 'tmp']));
    // The node running the tests is bound too when it lives outside /usr (CI's Node 22 in .tools/).
    const runtime = nodeRuntimeDir()?.split('/') ?? [];
    const runtimeTop = runtime[1] === 'tmp' ? runtime[2] : runtime[1];
    for (const absent of ['root', 'home', 'work', 'var', 'opt', 'srv'])
      if (absent !== runtimeTop) expect(top).not.toContain(absent);
    // Only the bound directories' parents were created in the tmpfs.
    const inTmp = [dir.split('/')[2], ...(runtime[1] === 'tmp' ? [runtime[2]] : [])];
    expect(tmp!.trim().split('\n').sort()).toEqual([...new Set(inTmp)].sort());
    expect(mine).toBe('mine\n');
    // bwrap's init, sh, and ls's pipeline: a pid namespace of its own, not the host's hundreds.
    expect(Number(pids)).toBeLessThan(10);
  });

  it('refuses writes to read-only binds, allows them in writable ones, and cannot see unbound paths', () => {
    const r = run(
      `cat ${hidden}/secret.txt 2>&1; { echo x > ${dir}/ro.txt; } 2>&1; { echo rw > ${hidden}/rw.txt; } 2>&1; echo ok`,
      { readOnly: [dir] },
    );
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/secret.txt: No such file or directory/);
    expect(lines[1]).toMatch(/ro.txt: Read-only file system/);
    expect(lines[2]).toMatch(/rw.txt: (Directory nonexistent|No such file or directory)/);
    expect(r.stdout.trim().endsWith('ok')).toBe(true);
    expect(existsSync(join(dir, 'ro.txt'))).toBe(false);
    expect(existsSync(join(hidden, 'rw.txt'))).toBe(false);
    const w = run(`echo rw > ${dir}/rw.txt && cat ${dir}/rw.txt`, { writable: [dir] });
    expect(w.stdout).toBe('rw\n');
  });

  it('with network none the only interface is its own loopback', () => {
    const r = run('cat /proc/net/dev', {});
    const ifaces = r.stdout
      .split('\n')
      .slice(2)
      .map((l) => l.trim().split(':')[0])
      .filter((n) => n);
    expect(ifaces).toEqual(['lo']);
  });
});
