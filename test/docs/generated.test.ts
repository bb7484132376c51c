/**
 * docs/configuration.md and docs/mcp-gateway.schema.json are what scripts/gen-docs.mjs makes of the
 * config schema (its check mode, over the TypeScript sources and as `npm run docs -- --check`
 * runs it over dist/); the page names every key; the JSON Schema takes the configs the gateway
 * takes; and the example configs name it by a path that resolves.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import * as diff from '../../src/config/diff.js';
import * as schema from '../../src/config/schema.js';
import * as server from '../../src/config/server.js';
import { resolveConfig } from '../../src/config/load.js';
import { GENERATED, inputsFrom, staleFiles } from '../../scripts/gen-docs.mjs';
import { ROOT } from '../support/docs.js';

const inputs = inputsFrom({ schema, server, diff });
const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

/** Every key path of the schema, walked here (not by the generator): `upstreams[].pool.max`, `servers[].overrides.<name>.name`. */
function keyPaths(node: Record<string, unknown>, path: string, out: Set<string>): Set<string> {
  const object = (
    node.properties ? node : (node.anyOf as Array<Record<string, unknown>> | undefined)?.find((b) => b.properties)
  ) as { properties?: Record<string, Record<string, unknown>> } | undefined;
  for (const [key, sub] of Object.entries(object?.properties ?? {})) {
    const at = path ? `${path}.${key}` : key;
    out.add(at);
    keyPaths(sub, at, out);
  }
  const items = node.items as Record<string, unknown> | undefined;
  if (items) {
    keyPaths(items, `${path}[]`, out);
    for (const branch of (items.oneOf as Array<Record<string, unknown>> | undefined) ?? [])
      keyPaths(branch, `${path}[]`, out);
  }
  const map = node.additionalProperties;
  if (typeof map === 'object' && map !== null && (map as { properties?: unknown }).properties)
    keyPaths(map as Record<string, unknown>, `${path}.<name>`, out);
  return out;
}

describe('generated docs', () => {
  it('are fresh: check mode finds nothing stale (run `npm run docs` when this fails)', () => {
    expect(GENERATED).toEqual(['docs/configuration.md', 'docs/mcp-gateway.schema.json']);
    expect(staleFiles(inputs, ROOT)).toEqual([]);
  });

  it('check mode names a file that differs or is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpgw-docs-'));
    temp.push(dir);
    mkdirSync(join(dir, 'docs'));
    for (const path of GENERATED) copyFileSync(resolve(ROOT, path), join(dir, path));
    expect(staleFiles(inputs, dir)).toEqual([]);
    writeFileSync(
      join(dir, 'docs/configuration.md'),
      `${readFileSync(join(dir, 'docs/configuration.md'), 'utf8')}\nedited by hand\n`,
    );
    expect(staleFiles(inputs, dir)).toEqual(['docs/configuration.md']);
    rmSync(join(dir, 'docs/mcp-gateway.schema.json'));
    expect(staleFiles(inputs, dir)).toEqual(GENERATED);
  });

  it('npm run docs -- --check: the script over dist/ exits 0 (npm test builds dist/ first)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [resolve(ROOT, 'scripts/gen-docs.mjs'), '--check'], {
      cwd: ROOT,
      timeout: 30_000,
    });
    expect(stdout).toContain('2 of 2 generated file(s) fresh');
  });

  it('configuration.md names every key of the schema, with its default', () => {
    const page = readFileSync(resolve(ROOT, 'docs/configuration.md'), 'utf8');
    const paths = [...keyPaths(schema.configSchema as unknown as Record<string, unknown>, '', new Set())];
    expect(paths.length).toBeGreaterThan(150);
    expect(paths.filter((p) => !page.includes(`| \`${p}\` |`) && !page.includes(`### \`${p}\``))).toEqual([]);
    expect(page).toMatch(/^\| `limits\.maxJsonDepth` \| integer 8–1000 \| `64` \| at once \| /m);
    expect(page).toMatch(/^\| `legacySse\.ssePath` \| [^|]+ \| `\/sse` \| restart \| /m);
    expect(page).toMatch(/^\| `upstreams\[\]\.pool\.max` \| integer ≥ 1 \| `4` \| new workers \| /m);
  });
});

describe('docs/mcp-gateway.schema.json', () => {
  const editorSchema = JSON.parse(readFileSync(resolve(ROOT, 'docs/mcp-gateway.schema.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const validate = new Ajv({ strict: true, allErrors: true }).compile(editorSchema);
  const configs = ['examples/gateway.yaml', 'examples/tasks/gateway.yaml', 'deploy/compose/gateway.yaml'];

  it('is draft-07 JSON Schema that takes the configs the gateway takes', () => {
    expect(editorSchema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    for (const file of configs) {
      const config = parse(readFileSync(resolve(ROOT, file), 'utf8')) as unknown;
      resolveConfig(config, { MCPGW_REDIS_URL: 'redis://redis:6379' });
      expect(validate(config), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    // A key with no value is not set, for the gateway and for editors alike.
    expect(validate({ upstreams: [{ name: 'a', transport: 'stdio', command: 'node', prefix: null }] })).toBe(true);
  });

  it('refuses what the gateway refuses', () => {
    for (const bad of [
      { upstreams: [{ name: 'a', transport: 'stdio' }] },
      { upstreams: [{ name: 'a', transport: 'stdio', command: 'node', url: 'http://x' }] },
      { upstreams: [{ name: 'a', transport: 'http', url: 'ftp://x' }] },
      { upstreams: [{ name: 'a', transport: 'stdio', command: 'node' }], limits: { maxJsonDepth: 2 } },
      { upstreams: [{ name: 'a', transport: 'stdio', command: 'node' }], nope: true },
    ]) {
      expect(() => resolveConfig(bad, {}), JSON.stringify(bad)).toThrow();
      expect(validate(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('is named atop every example config, by a path that resolves to it', () => {
    const yamls = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) =>
        statSync(join(dir, n)).isDirectory() ? yamls(join(dir, n)) : n.endsWith('.yaml') ? [join(dir, n)] : [],
      );
    const files = yamls(resolve(ROOT, 'examples'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const first = readFileSync(file, 'utf8').split('\n')[0]!;
      const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
      expect(m, file).not.toBeNull();
      expect(resolve(dirname(file), m![1]!)).toBe(resolve(ROOT, 'docs/mcp-gateway.schema.json'));
    }
  });
});
