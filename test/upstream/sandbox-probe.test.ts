/**
 * A host that cannot run sandboxes: bwrap missing from the gateway's PATH, or a bwrap whose
 * namespaces the kernel refuses (a stand-in script that fails as bwrap does there). Each is one
 * error naming every sandboxed upstream and the cause: from sandboxProblems, from `--check`
 * (exit 2), and from a real gateway's start-up (exit 1, before any worker is started).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { locateBwrap, sandboxProblems } from '../../src/upstream/sandbox-probe.js';
import { countedStarts } from '../support/child-processes.js';
import { ROOT, stdioUpstream } from '../support/gateway.js';

const FIXTURES = resolve(ROOT, 'test/fixtures');
const FIXTURE = join(FIXTURES, 'sandbox-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-sbx-probe-'));
const empty = join(dir, 'empty');
const refusing = join(dir, 'refusing');
mkdirSync(empty);
mkdirSync(refusing);
// What bwrap says where unprivileged user namespaces are off (and no CAP_SYS_ADMIN).
writeFileSync(
  join(refusing, 'bwrap'),
  '#!/bin/sh\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
);
chmodSync(join(refusing, 'bwrap'), 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Every start of the unsandboxed one is written to `starts`: a start-up that fails must start none.
const upstreamsCounted = (starts: string) => [
  stdioUpstream('plain', FIXTURE, countedStarts(FIXTURE, starts)),
  stdioUpstream('boxed', FIXTURE, { sandbox: { readOnly: [FIXTURES] } }),
  stdioUpstream('hosted', FIXTURE, { sandbox: { network: 'host', readOnly: [FIXTURES] } }),
];
const config = resolveConfig({ upstreams: upstreamsCounted(join(dir, 'unused')) }, {});

describe('sandboxProblems', () => {
  it('is empty where bwrap runs (this host), and when no upstream is sandboxed, whatever the PATH', async () => {
    expect(locateBwrap()).toBeDefined();
    expect(await sandboxProblems(config.upstreams)).toEqual([]);
    expect(await sandboxProblems(config.upstreams.slice(0, 1), empty)).toEqual([]);
  });

  it('names each sandboxed upstream when bwrap is not on the PATH', async () => {
    expect(await sandboxProblems(config.upstreams, empty)).toEqual([
      `upstreams[1] (boxed): sandbox: bwrap (bubblewrap) is not found on PATH (${empty}); install the bubblewrap package`,
      `upstreams[2] (hosted): sandbox: bwrap (bubblewrap) is not found on PATH (${empty}); install the bubblewrap package`,
    ]);
  });

  it("names the kernel's refusal, in bwrap's words, when its namespaces cannot be created", async () => {
    const found = await sandboxProblems(config.upstreams, refusing);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^upstreams\[1\] \(boxed\): sandbox: .*bwrap cannot create the sandbox's namespaces here/);
    expect(found[0]).toContain('kernel does not allow non-privileged user namespaces');
    expect(found[0]).toMatch(/unprivileged user namespaces .*CAP_SYS_ADMIN.*seccomp\/AppArmor/);
  });
});

describe('the gateway process on such a host', () => {
  const main = resolve(ROOT, 'dist/main.js');
  const starts = join(dir, 'starts');
  const file = join(dir, 'gateway.json');
  const upstreams = upstreamsCounted(starts);
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, logLevel: 'silent', upstreams }));
  // node by its absolute path; the gateway's PATH has no usable bwrap.
  const env = (path: string) => ({ PATH: path });

  it('--check exits 2 naming the upstreams and the cause', () => {
    const r = spawnSync(process.execPath, [main, '--check', '--config', file], {
      env: env(empty),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`upstreams[1] (boxed): sandbox: bwrap (bubblewrap) is not found on PATH (${empty})`);
    expect(r.stderr).toContain('upstreams[2] (hosted): sandbox:');
  });

  it('start-up fails with exit 1 naming them, before any upstream process is started', async () => {
    rmSync(starts, { force: true }); // (--check above started them, to list them)
    const child = spawn(process.execPath, [main, '--config', file], {
      env: env(refusing),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /failed to start: upstreams\[1\] \(boxed\): sandbox: .*cannot create the sandbox's namespaces/,
    );
    expect(stderr).toContain('upstreams[2] (hosted): sandbox:');
    expect(existsSync(starts)).toBe(false);
  });
});
