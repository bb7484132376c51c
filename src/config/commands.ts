/**
 * Whether each stdio upstream's command can be started: a path (with a slash) must name an
 * executable file, relative to the upstream's cwd; a bare name must be found on the PATH the
 * child gets (its own `env.PATH`, else the gateway's, or in a sandbox its minimal one). Not a
 * load-time check: an upstream that cannot start is retried in the background at run time;
 * --check (and a reload) say so first.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { SANDBOX_PATH } from './sandbox.js';
import type { GatewayConfig } from './schema.js';

export function missingCommands(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  const problems: string[] = [];
  config.upstreams.forEach((u, i) => {
    if (u.transport !== 'stdio') return;
    const at = `upstreams[${i}].command`;
    const cwd = u.cwd ?? process.cwd();
    if (u.command.includes('/')) {
      const file = isAbsolute(u.command) ? u.command : resolve(cwd, u.command);
      if (!executable(file))
        problems.push(
          `${at}: "${u.command}" is not an executable file${isAbsolute(u.command) ? '' : ` (looked in ${cwd})`}`,
        );
      return;
    }
    const path = u.env?.PATH ?? (u.sandbox ? SANDBOX_PATH : env.PATH) ?? '';
    const dirs = path.split(delimiter).filter((d) => d !== '');
    if (!dirs.some((d) => executable(join(isAbsolute(d) ? d : resolve(cwd, d), u.command)))) {
      problems.push(`${at}: "${u.command}" is not found on PATH (${dirs.join(delimiter) || 'empty'})`);
    }
  });
  return problems;
}

function executable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
