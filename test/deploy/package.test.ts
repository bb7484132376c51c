/**
 * The npm package as documented: a name of our own (the registry's `mcp-gateway` is another
 * project's), a command by that name so `npx <name>` runs it, and one Node floor said alike by
 * `engines`, the README and docs/deployment.md, the Node this runs on (CI's) and every package in
 * the lockfile, so `npm ci` has no EBADENGINE to warn about.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support.js';

const require = createRequire(import.meta.url);
const semver = require('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  engines: { node: string };
  overrides?: Record<string, unknown>;
};
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as {
  name: string;
  packages: Record<string, { version?: string; engines?: unknown }>;
};
const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
const deployment = readFileSync(resolve(ROOT, 'docs/deployment.md'), 'utf8');
/** The README and every page of docs/, each by its path. */
const pages: Array<[string, string]> = [
  ['README.md', readme],
  ...readdirSync(resolve(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f): [string, string] => [`docs/${f}`, readFileSync(resolve(ROOT, 'docs', f), 'utf8')]),
];

describe('package name and npx', () => {
  it("is not the registry's unrelated mcp-gateway, and its own command runs under npx (from the clone, nothing fetched)", async () => {
    expect(pkg.name).toBe('mcpgw');
    expect(lock.name).toBe(pkg.name);
    expect(pkg.bin[pkg.name]).toBe('dist/main.js');
    // Only where the README (or docs/deployment.md) warns against it.
    for (const [path, text] of pages) {
      expect(text.replaceAll('`npx mcp-gateway` would run that', ''), path).not.toMatch(/npx (-y )?mcp-gateway\b/);
    }
    expect(readme).toMatch(/npx mcpgw --config/);
    expect(deployment).toMatch(/npx mcpgw --config/);
    const { stdout } = await promisify(execFile)('npx', ['--no-install', pkg.name, '--version'], {
      cwd: ROOT,
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe(pkg.version);
  });
});

describe('the Node floor', () => {
  const floor = semver.minVersion(pkg.engines.node)!.version;

  it('engines, the README, docs/deployment.md and the Node running the tests agree', () => {
    expect(pkg.engines.node).toBe('>=20.19');
    const [major, minor] = floor.split('.');
    expect(readme).toContain(`Node.js ≥ ${major}.${minor} (\`engines\`)`);
    expect(deployment).toContain(`Node.js ≥ ${major}.${minor} (\`engines\`)`);
    expect(semver.satisfies(process.versions.node, pkg.engines.node), `node ${process.versions.node}`).toBe(true);
  });

  it('every package in the lockfile runs on the floor (npm ci warns EBADENGINE otherwise)', () => {
    const tooNew: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const node =
        typeof entry.engines === 'object' && entry.engines !== null
          ? (entry.engines as { node?: unknown }).node
          : undefined;
      if (typeof node === 'string' && !semver.satisfies(floor, node))
        tooNew.push(`${path}@${entry.version}: node ${node}`);
    }
    expect(tooNew).toEqual([]);
  });

  it('light-my-request (fastify.inject) works with the cookie it is overridden to', async () => {
    expect(pkg.overrides).toEqual({ 'light-my-request': { cookie: '1.1.1' } });
    expect(
      lock.packages['node_modules/light-my-request/node_modules/cookie']?.version ??
        lock.packages['node_modules/cookie']?.version,
    ).toBe('1.1.1');
    const app = Fastify();
    app.get('/', async (request, reply) => {
      reply.header('set-cookie', ['seen=yes; Path=/; HttpOnly']);
      return { cookie: request.headers.cookie };
    });
    const res = await app.inject({ method: 'GET', url: '/', cookies: { a: '1', b: 'x y' } });
    expect(res.json()).toEqual({ cookie: 'a=1; b=x%20y' });
    expect(res.cookies).toEqual([{ name: 'seen', value: 'yes', path: '/', httpOnly: true }]);
    await app.close();
  });
});
