/**
 * Whether the sandboxed stdio upstreams can run here: bwrap found on the gateway's PATH, and the
 * kernel letting it create the namespaces (probed once per process: `bwrap … true`). Asked at
 * start-up and by --check, so a host without them is one clear error naming each upstream, not
 * workers failing to start and restarting forever.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { UpstreamConfig } from '../config/schema.js';
import { SANDBOX_PATH } from '../config/sandbox.js';

const PROBE_TIMEOUT_MS = 10_000;

/** The flags every sandbox uses that need the kernel's consent; the mounts are the simplest. */
const PROBE_ARGS = [
  '--unshare-all',
  '--unshare-user',
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
  '--ro-bind',
  '/',
  '/',
  '--proc',
  '/proc',
  '--dev',
  '/dev',
  '--',
  'true',
];

/** bwrap's absolute path on `path` (the gateway's PATH), or undefined. */
export function locateBwrap(path: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const file = join(dir, 'bwrap');
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

let probed: { path: string | undefined; outcome: Promise<string | undefined> } | undefined;

/** Why sandboxes cannot run here (undefined: they can); the probe runs once per PATH. */
export function sandboxUnavailable(path: string | undefined = process.env.PATH): Promise<string | undefined> {
  if (probed !== undefined && probed.path === path) return probed.outcome;
  const bwrap = locateBwrap(path);
  const outcome =
    bwrap === undefined
      ? Promise.resolve(`bwrap (bubblewrap) is not found on PATH (${path ?? ''}); install the bubblewrap package`)
      : probe(bwrap);
  probed = { path, outcome };
  return outcome;
}

function probe(bwrap: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bwrap, PROBE_ARGS, { env: { PATH: SANDBOX_PATH }, timeout: PROBE_TIMEOUT_MS }, (err, _out, stderr) => {
      if (!err) return resolve(undefined);
      const said = String(stderr).trim().split('\n').pop() || err.message;
      resolve(
        `${bwrap} cannot create the sandbox's namespaces here (${said}); the kernel must allow unprivileged ` +
          'user namespaces (or the gateway needs CAP_SYS_ADMIN), and seccomp/AppArmor must allow unshare',
      );
    });
  });
}

/** One problem per sandboxed upstream when sandboxes cannot run here, naming it and the cause. */
export async function sandboxProblems(
  upstreams: readonly UpstreamConfig[],
  path: string | undefined = process.env.PATH,
): Promise<string[]> {
  const sandboxed = upstreams.flatMap((u, i) => (u.transport === 'stdio' && u.sandbox ? [{ u, i }] : []));
  if (sandboxed.length === 0) return [];
  const cause = await sandboxUnavailable(path);
  if (cause === undefined) return [];
  return sandboxed.map(({ u, i }) => `upstreams[${i}] (${u.name}): sandbox: ${cause}`);
}

/** sandboxProblems as a start-up step: throws them, in one error. */
export async function sandboxesReady(upstreams: readonly UpstreamConfig[]): Promise<void> {
  const problems = await sandboxProblems(upstreams);
  if (problems.length > 0) throw new Error(problems.join('; '));
}
