/**
 * Loading a config: the file (YAML or JSON) or the embedded default, the MCPGW_* overrides, the
 * schema (ajv, with its defaults) and each section's checks, every problem named in one error.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { configAjv } from './config-ajv.js';
import { applyEnvOverrides } from './env.js';
import { configChecks, configSchema, type GatewayConfig } from './schema.js';

/** Every problem found in a config, each naming the key it is about. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const validate = configAjv.compile<GatewayConfig>(configSchema);

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The embedded default: in-memory sessions and the bundled example upstreams. */
export function defaultConfigSource(): Record<string, unknown> {
  const example = (name: string) => ({
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [resolve(packageRoot, 'examples', name, 'server.mjs')],
  });
  return { upstreams: [example('echo'), example('slow')] };
}

function keyPath(instancePath: string): string {
  if (instancePath === '') return '(root)';
  return instancePath
    .slice(1)
    .split('/')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

function describe(error: ErrorObject): string {
  const at = keyPath(error.instancePath);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${at === '(root)' ? '' : `${at}.`}${String(p.additionalProperty)}: unknown key`;
    case 'required':
      return `${at === '(root)' ? '' : `${at}.`}${String(p.missingProperty)}: is required`;
    case 'pattern':
      if (at.endsWith('.url')) return `${at}: must be an http or https URL`;
      if (/\.cluster\[\d+\]$/.test(at)) return `${at}: must be host:port`;
      return `${at}: ${error.message ?? 'is invalid'}`;
    case 'enum':
      return `${at}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${at}: ${error.message ?? 'is invalid'}`;
  }
}

/** Validates a parsed config object (file contents, or the embedded default). */
export function resolveConfig(source: unknown, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new ConfigError(['(root): the configuration must be a mapping of keys']);
  }
  const raw = structuredClone(source) as Record<string, unknown>;
  const problems: string[] = [];
  applyEnvOverrides(raw, env, problems);
  // A discriminator error repeats what the `transport` enum or `required` error already says.
  if (!validate(raw))
    problems.push(...(validate.errors ?? []).filter((e) => e.keyword !== 'discriminator').map(describe));
  const config = raw as unknown as GatewayConfig;
  // Also on a config the schema rejected (guarded against its shape), so one run names every problem.
  problems.push(...configChecks(config, env));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Reads `file` (YAML or JSON), or the embedded default when there is none. */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  if (!file) return resolveConfig(defaultConfigSource(), env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text); // YAML is a superset of JSON, so one parser reads both
  } catch (err) {
    throw new ConfigError([`${file}: not valid YAML or JSON (${(err as Error).message.split('\n')[0]})`]);
  }
  return resolveConfig(parsed, env);
}
