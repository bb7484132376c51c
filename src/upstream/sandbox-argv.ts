/**
 * The bubblewrap command line of a sandboxed stdio upstream (`upstreams[].sandbox`): pure, so what
 * a sandbox mounts and shares is read and tested in one place. What the host looks like (which of
 * /lib* are symlinks, where node lives) comes in as `HostLayout`; wires/stdio-launch.ts reads it.
 */
import { posix } from 'node:path';
import { SANDBOX_PATH, type SandboxConfig } from '../config/sandbox.js';

/** The host's system directories as found: a directory, a symlink to its target (merged /usr), or absent. */
export interface HostLayout {
  systemDirs: ReadonlyArray<{ path: string; link?: string }>;
  /** The running node's installation, when outside the system directories. */
  runtimeDir?: string;
}

/** What a sandboxed child needs from /etc: the dynamic loader's cache, TLS roots, name resolution, users, time. */
export const SANDBOX_ETC = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/localtime',
  '/etc/timezone',
] as const;

export interface SandboxedCommand {
  command: string;
  args: readonly string[];
  cwd?: string;
  /** The upstream's own `env` (values from the config). */
  env: Readonly<Record<string, string>>;
  sandbox: SandboxConfig;
}

/** bwrap's argv, and the whole environment it runs with (which the child inherits, and nothing else). */
export interface BwrapLaunch {
  args: string[];
  env: Record<string, string>;
}

/**
 * Namespaces: user, pid, ipc, uts, cgroup (if the kernel has it) and, unless `network: host`,
 * net; every capability dropped inside (run as root, bwrap would keep them in the new user
 * namespace); the child dies with bwrap (`--die-with-parent`) and has no controlling terminal.
 */
export function bwrapArgs(u: SandboxedCommand, gatewayEnv: NodeJS.ProcessEnv, layout: HostLayout): BwrapLaunch {
  const { sandbox } = u;
  const args = ['--unshare-all', '--unshare-user'];
  if (sandbox.network === 'host') args.push('--share-net');
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL');
  for (const { path, link } of layout.systemDirs) {
    if (link !== undefined) args.push('--symlink', link, path);
    else args.push('--ro-bind', path, path);
  }
  // The private /tmp before any bind below it: a node installed under /tmp (a CI checkout's .tools/)
  // bound first would be hidden by the tmpfs mounted over it.
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  if (layout.runtimeDir !== undefined) args.push('--ro-bind', layout.runtimeDir, layout.runtimeDir);
  for (const file of SANDBOX_ETC) args.push('--ro-bind-try', file, file);
  for (const bind of userBinds(sandbox)) args.push(bind.writable ? '--bind' : '--ro-bind', bind.path, bind.path);
  args.push('--chdir', u.cwd ?? '/tmp', '--', u.command, ...u.args);
  return { args, env: sandboxEnv(u, gatewayEnv) };
}

/**
 * readOnly and writable together, outer paths first: a mount hides what was mounted below it
 * before, so a writable directory inside a read-only one (or the reverse) must come after it.
 */
function userBinds(sandbox: SandboxConfig): Array<{ path: string; writable: boolean }> {
  const binds = [
    ...(sandbox.readOnly ?? []).map((p) => ({ path: posix.normalize(p), writable: false })),
    ...(sandbox.writable ?? []).map((p) => ({ path: posix.normalize(p), writable: true })),
  ];
  const depth = (p: string) => p.split('/').filter((s) => s !== '').length;
  // Stable: at the same depth, read-only first, in config order.
  return binds.map((b, i) => ({ ...b, i })).sort((a, b) => depth(a.path) - depth(b.path) || a.i - b.i);
}

/**
 * PATH, HOME and TMPDIR (the private /tmp), the gateway's variables named in `sandbox.env`, then
 * the upstream's own `env`. Given to bwrap as its environment rather than as `--setenv` arguments:
 * a value in an argv is readable by every user of the host in /proc/<pid>/cmdline.
 */
function sandboxEnv(u: SandboxedCommand, gatewayEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = { PATH: SANDBOX_PATH, HOME: '/tmp', TMPDIR: '/tmp' };
  for (const name of u.sandbox.env ?? []) {
    const v = gatewayEnv[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...u.env };
}
