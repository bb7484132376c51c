/**
 * Shared by the deployment checks in test/deploy/: the repository root, and the gateway's own
 * config validation (src/config/load.ts) applied the way a container would apply it.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The image's WORKDIR: examples/ is copied to /app/examples. */
export const IMAGE_WORKDIR = '/app';

/**
 * Validates a config the way the gateway does at start-up, with exactly `env` as the
 * environment (nothing from the test's own environment leaks in). Returns the resolved config,
 * or throws an Error listing every problem.
 */
export function checkGatewayConfig(source: unknown, env: Record<string, string>): GatewayConfig {
  try {
    return resolveConfig(source, { ...env });
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(`gateway config rejected:\n${err.problems.join('\n')}`);
    throw err;
  }
}

/** Where a path inside the image (under /app) comes from in the repository, or undefined. */
export function repoPathOfImagePath(path: string, workdir = IMAGE_WORKDIR): string | undefined {
  const abs = path.startsWith('/') ? path : `${workdir}/${path}`;
  if (!abs.startsWith(`${IMAGE_WORKDIR}/examples/`)) return undefined;
  return resolve(ROOT, abs.slice(IMAGE_WORKDIR.length + 1));
}

/**
 * Every upstream script of a config that runs from the image's examples/ must exist in the
 * repository (so the image has it). Returns the ones that don't.
 */
export function missingExampleScripts(config: GatewayConfig, workdir = IMAGE_WORKDIR): string[] {
  const missing: string[] = [];
  for (const u of config.upstreams) {
    if (u.transport !== 'stdio') continue; // a remote upstream has no script
    for (const arg of u.args) {
      if (!/\.m?js$/.test(arg)) continue;
      const repoPath = repoPathOfImagePath(arg, u.cwd ?? workdir);
      if (repoPath === undefined || !existsSync(repoPath)) missing.push(`${u.name}: ${arg}`);
    }
  }
  return missing;
}
