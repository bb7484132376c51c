/**
 * How a stdio upstream's process is started: its command as configured, or, with `sandbox`, bwrap
 * running it (upstream/sandbox-argv.ts). Either way the same spawn, so exits, restarts, stderr and
 * stop by PID (of bwrap, whose child dies with it) are the same for both.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import type { StdioUpstreamConfig } from '../../config/schema.js';
import { nodeRuntimeDir, SANDBOX_SYSTEM_DIRS } from '../../config/sandbox.js';
import { bwrapArgs, type HostLayout } from '../sandbox-argv.js';
import { locateBwrap } from '../sandbox-probe.js';

/**
 * Variables a child inherits from the gateway. Everything else must be named in the upstream's
 * `env`, so secrets in the gateway's environment do not leak into every upstream.
 */
const INHERITED_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'TZ', 'TMPDIR', 'NODE_OPTIONS'];

export interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of INHERITED_ENV) {
    const v = process.env[key];
    if (v !== undefined) env[key] = v;
  }
  return { ...env, ...extra };
}

let layout: HostLayout | undefined;

/** The host's system directories and node, read once: they do not change under a running gateway. */
function hostLayout(): HostLayout {
  if (layout) return layout;
  const systemDirs: Array<{ path: string; link?: string }> = [];
  for (const path of SANDBOX_SYSTEM_DIRS) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) systemDirs.push({ path, link: readlinkSync(path) });
      else if (st.isDirectory()) systemDirs.push({ path });
    } catch {
      /* absent on this host */
    }
  }
  const runtimeDir = nodeRuntimeDir();
  layout = { systemDirs, ...(runtimeDir ? { runtimeDir } : {}) };
  return layout;
}

export function launchOf(config: StdioUpstreamConfig): Launch {
  const { command, args, cwd, sandbox } = config;
  const env = config.env ?? {};
  if (!sandbox) return { command, args: args ?? [], env: childEnv(env), ...(cwd ? { cwd } : {}) };
  // Checked at start-up (sandbox-probe.ts); should it be gone since, the spawn fails like a missing command.
  const bwrap = locateBwrap() ?? 'bwrap';
  const launch = bwrapArgs(
    { command, args: args ?? [], env, sandbox, ...(cwd ? { cwd } : {}) },
    process.env,
    hostLayout(),
  );
  return { command: bwrap, args: launch.args, env: launch.env, ...(cwd ? { cwd } : {}) };
}
