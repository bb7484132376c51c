/**
 * Sandboxed stdio upstreams (`upstreams[].sandbox`, bubblewrap) behind a real gateway, called by an
 * SDK client: the fixture server's tools (test/fixtures/sandbox-server.mjs) try what a sandbox
 * must stop (the host's loopback, writes and reads outside its binds, the gateway's secrets),
 * with unsandboxed or `network: host` controls; a crash is any crash; nothing survives the stop.
 * And the official server-everything, whose node_modules are all it is given.
 */
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPidsRunning } from '../support/child-processes.js';
import { connectClient, EVERYTHING, everythingUpstream } from '../support/everything.js';
import { ROOT, exampleConfig, isAlive, startGateway, stdioUpstream, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { locateBwrap } from '../../src/upstream/sandbox-probe.js';

const FIXTURES = resolve(ROOT, 'test/fixtures');
const FIXTURE = join(FIXTURES, 'sandbox-server.mjs');
const SECRET = 'MCPGW_SANDBOX_TEST_SECRET';
const PASSED = 'MCPGW_SANDBOX_TEST_PASSED';

const writable = mkdtempSync(join(tmpdir(), 'mcpgw-sbx-rw-'));
const outside = mkdtempSync(join(tmpdir(), 'mcpgw-sbx-out-'));
writeFileSync(join(outside, 'private.txt'), 'not for the sandbox');
const marker = `mcpgw-sbx-sleeper-${process.pid}`;

let gw: RunningGateway;
let client: Client;
let listener: Server;
let port: number;

beforeAll(async () => {
  // In the gateway's own environment: one the sandbox is told to pass, one it must never see.
  process.env[SECRET] = 'gateway-secret-value';
  process.env[PASSED] = 'passed-value';
  listener = createServer((socket) => socket.end());
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as { port: number }).port;
  const box = (network: string, extra: Record<string, unknown> = {}) => ({
    network,
    readOnly: [FIXTURES],
    ...extra,
  });
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('boxed', FIXTURE, {
          pool: { min: 1, max: 1 },
          sandbox: box('none', { writable: [writable], env: [PASSED] }),
        }),
        stdioUpstream('hosted', FIXTURE, { pool: { min: 1, max: 1 }, sandbox: box('host') }),
        stdioUpstream('plain', FIXTURE, { pool: { min: 1, max: 1 }, env: { [PASSED]: 'plain' } }),
        stdioUpstream('mine', FIXTURE, { mode: 'per-session', sandbox: box('none') }),
        everythingUpstream('ev', { sandbox: { readOnly: [realpathSync(resolve(ROOT, 'node_modules'))] } }),
      ],
    }),
  );
  ({ client } = await connectClient(gw.url));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await gw?.stop();
  await new Promise((r) => listener?.close(r));
  delete process.env[SECRET];
  delete process.env[PASSED];
  rmSync(writable, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

async function call(name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const r = (await client.callTool({ name, arguments: args })) as {
    content: Array<{ text: string }>;
    isError?: boolean;
  };
  return { text: r.content.map((c) => c.text).join(''), isError: r.isError === true };
}

describe('network', () => {
  it('none: the port the test listens on at 127.0.0.1 is not reachable (its loopback is its own)', async () => {
    expect(await call('boxed__try_connect', { port })).toEqual({
      text: expect.stringMatching(/^ECONNREFUSED/),
      isError: true,
    });
  });

  it('host (the control): the same port is reachable', async () => {
    expect(await call('hosted__try_connect', { port })).toEqual({ text: 'connected', isError: false });
  });
});

describe('files', () => {
  it('writes inside writable reach the host; writes to its read-only binds fail', async () => {
    const file = join(writable, 'from-sandbox.txt');
    expect(await call('boxed__write_file', { path: file, content: 'hello' })).toEqual({
      text: 'written',
      isError: false,
    });
    expect(readFileSync(file, 'utf8')).toBe('hello');
    const ro = await call('boxed__write_file', { path: join(FIXTURES, 'not-allowed.txt') });
    expect(ro).toEqual({ text: expect.stringMatching(/^EROFS/), isError: true });
    expect(existsSync(join(FIXTURES, 'not-allowed.txt'))).toBe(false);
  });

  it('a directory it was not given does not exist for it: no write reaches the host', async () => {
    const r = await call('boxed__write_file', { path: join(outside, 'escaped.txt') });
    expect(r).toEqual({ text: expect.stringMatching(/^ENOENT/), isError: true });
    expect(readdirSync(outside)).toEqual(['private.txt']);
  });

  it('cannot read a file outside its binds; the unsandboxed control can', async () => {
    const path = join(outside, 'private.txt');
    expect(await call('boxed__read_file', { path })).toEqual({ text: expect.stringMatching(/^ENOENT/), isError: true });
    expect(await call('boxed__read_file', { path: resolve(ROOT, 'package.json') })).toMatchObject({ isError: true });
    expect(await call('plain__read_file', { path })).toEqual({ text: 'not for the sandbox', isError: false });
  });
});

describe('environment', () => {
  it("does not see the gateway's secret; sees the name passed in sandbox.env, a minimal PATH, HOME=/tmp", async () => {
    expect(await call('boxed__get_env', { name: SECRET })).toEqual({ text: '(unset)', isError: true });
    expect(await call('hosted__get_env', { name: SECRET })).toEqual({ text: '(unset)', isError: true });
    expect(await call('boxed__get_env', { name: PASSED })).toEqual({ text: 'passed-value', isError: false });
    expect(await call('hosted__get_env', { name: PASSED })).toEqual({ text: '(unset)', isError: true });
    expect(await call('boxed__get_env', { name: 'PATH' })).toEqual({
      text: '/usr/local/bin:/usr/bin:/bin',
      isError: false,
    });
    expect(await call('boxed__get_env', { name: 'HOME' })).toEqual({ text: '/tmp', isError: false });
  });
});

describe('an official server with dependencies', () => {
  it('server-everything runs sandboxed with only its node_modules mounted', async () => {
    expect(EVERYTHING.startsWith(realpathSync(resolve(ROOT, 'node_modules')))).toBe(true);
    expect(await call('ev__echo', { message: 'from the box' })).toEqual({ text: 'Echo: from the box', isError: false });
  });
});

/** The bwrap processes the gateway started for the fixture (its direct children; the server runs inside). */
const bwraps = () =>
  childPidsRunning(FIXTURE).filter((pid) =>
    readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(`${locateBwrap()}\0`),
  );

describe('a crash inside the sandbox', () => {
  it('fails the call in flight with UPSTREAM_UNAVAILABLE; the pool starts a new sandbox and the next call works', async () => {
    const before = bwraps();
    expect(before.length).toBeGreaterThanOrEqual(2); // boxed, hosted (plain runs node itself), mine's spare
    await expect(client.callTool({ name: 'boxed__exit', arguments: { code: 7 } })).rejects.toMatchObject({
      code: -32004,
      message: expect.stringMatching(/exited with code 7/),
    });
    await until(
      'a new boxed worker answers',
      async () => !(await call('boxed__get_env', { name: 'HOME' })).isError,
      20_000,
    );
    const after = bwraps();
    const gone = before.filter((pid) => !after.includes(pid));
    expect(gone).toHaveLength(1);
    expect(after.filter((pid) => !before.includes(pid))).toHaveLength(1);
    expect(isAlive(gone[0]!)).toBe(false);
  });
});

describe('per-session workers', () => {
  it("each session's worker is its own sandbox: its own private /tmp", async () => {
    const other = await connectClient(gw.url);
    try {
      await call('mine__write_file', { path: '/tmp/whose.txt', content: 'first' });
      await other.client.callTool({
        name: 'mine__write_file',
        arguments: { path: '/tmp/whose.txt', content: 'second' },
      });
      expect(await call('mine__read_file', { path: '/tmp/whose.txt' })).toEqual({ text: 'first', isError: false });
      const theirs = (await other.client.callTool({
        name: 'mine__read_file',
        arguments: { path: '/tmp/whose.txt' },
      })) as {
        content: Array<{ text: string }>;
      };
      expect(theirs.content[0]!.text).toBe('second');
      expect(existsSync('/tmp/whose.txt')).toBe(false);
    } finally {
      await other.client.close();
    }
  });
});

/** Host pids whose command line contains `text` (all processes, not only this one's children). */
function pidsWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('stop', () => {
  it('leaves no process behind: not bwrap, not the server, not a grandchild the server started', async () => {
    expect(await call('boxed__spawn_sleeper', { marker })).toMatchObject({ isError: false });
    await until('the sleeper runs', () => pidsWith(marker).length === 1);
    const sandboxes = bwraps();
    expect(sandboxes.length).toBeGreaterThan(0);
    await client.close();
    await gw.stop();
    await until('every sandbox and the sleeper are gone', () => pidsWith(marker).length === 0, 10_000);
    for (const pid of sandboxes) expect(isAlive(pid)).toBe(false);
    expect(pidsWith(FIXTURE)).toEqual([]);
  });
});
