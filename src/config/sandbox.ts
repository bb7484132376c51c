/**
 * A stdio upstream's `sandbox` (bubblewrap): its schema, its type, its checks. What it mounts by
 * default and what each setting does is docs/sandbox.md; the argv is built in upstream/sandbox-argv.ts.
 */
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, normalize } from 'node:path';
import type { FromSchema } from 'json-schema-to-ts';

const absolutePaths = (description: string) =>
  ({
    type: 'array',
    items: { type: 'string', minLength: 1 },
    default: [],
    description,
  }) as const;

export const sandboxSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Runs the command under bubblewrap (bwrap) in new user, pid, network, ipc, uts and mount namespaces, with ' +
    'a minimal read-only filesystem, a private /tmp and a cleared environment. Absent: not sandboxed. See ' +
    'docs/sandbox.md.',
  properties: {
    network: {
      type: 'string',
      enum: ['none', 'loopback', 'host'],
      default: 'none',
      description:
        "none and loopback: a network namespace of its own, whose only interface is its own loopback (the host's " +
        "127.0.0.1 is not reachable from it); host: the gateway's network.",
    },
    readOnly: absolutePaths(
      'Absolute paths mounted read-only at the same place, besides the defaults (/usr, /lib*, /bin, /sbin, a ' +
        'few /etc files, the running node): the server itself, its node_modules, its data.',
    ),
    writable: absolutePaths(
      'Absolute paths mounted read-write at the same place; writes outside them fail or stay in /tmp.',
    ),
    env: {
      type: 'array',
      items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
      default: [],
      description:
        "Names of the gateway's environment variables passed in (unset ones are skipped); besides them the child " +
        'gets only PATH, HOME=/tmp, TMPDIR=/tmp and its own `env`.',
    },
  },
  required: [],
} as const;

export type SandboxConfig = FromSchema<typeof sandboxSchema>;

/**
 * What the sandbox mounts read-only whatever the config says (and where bare commands are found):
 * the system's programs and libraries. Paths under them need no readOnly entry.
 */
export const SANDBOX_SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/** The PATH a sandboxed child gets unless its own `env` sets one. */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The running node's installation when it is not under the system directories (a tarball in /opt,
 * nvm): mounted read-only too, so `command: node` servers run on the gateway's own node.
 */
export function nodeRuntimeDir(execPath: string = process.execPath): string | undefined {
  let real = execPath;
  try {
    real = realpathSync(execPath);
  } catch {
    /* as given */
  }
  if (SANDBOX_SYSTEM_DIRS.some((d) => isWithin(real, d))) return undefined;
  // <prefix>/bin/node: its lib/ (and include/, share/) come with it.
  return dirname(dirname(real));
}

/** `inner` is `outer` or below it. */
export function isWithin(inner: string, outer: string): boolean {
  return outer === '/' || inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
}

/**
 * Every path absolute and present (bubblewrap would refuse to start on a missing one, at every
 * restart); the whole filesystem never writable; the working directory and a command given as a
 * path inside what the sandbox mounts, else the child could not start in it.
 */
export function sandboxChecks(
  sandbox: SandboxConfig,
  upstream: { command?: unknown; cwd?: unknown },
  at: string,
  problems: string[],
): void {
  const runtime = nodeRuntimeDir();
  const mounted: string[] = [...SANDBOX_SYSTEM_DIRS, ...(runtime ? [runtime] : [])];
  for (const key of ['readOnly', 'writable'] as const) {
    const paths = sandbox[key];
    if (!Array.isArray(paths)) continue;
    paths.forEach((p, j) => {
      if (typeof p !== 'string') return;
      const where = `${at}.sandbox.${key}[${j}]`;
      if (!isAbsolute(p)) return void problems.push(`${where}: "${p}" is not an absolute path`);
      if (key === 'writable' && normalize(p) === '/')
        return void problems.push(`${where}: "/" would make the whole filesystem writable`);
      if (!exists(p)) return void problems.push(`${where}: "${p}" does not exist`);
      mounted.push(normalize(p));
    });
  }
  // /tmp is an empty tmpfs: itself, not what the host has below it.
  const inView = (p: string) => normalize(p) === '/tmp' || mounted.some((m) => isWithin(normalize(p), m));
  const { command, cwd } = upstream;
  if (typeof cwd === 'string' && isAbsolute(cwd) && !inView(cwd))
    problems.push(
      `${at}.cwd: "${cwd}" is not inside the sandbox (add it, or a directory above it, to sandbox.readOnly)`,
    );
  if (typeof cwd === 'string' && !isAbsolute(cwd))
    problems.push(`${at}.cwd: "${cwd}" must be an absolute path in a sandbox`);
  if (typeof command === 'string' && isAbsolute(command) && !inView(command))
    problems.push(`${at}.command: "${command}" is not inside the sandbox (add its directory to sandbox.readOnly)`);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
