/**
 * The config file and the CLI: `node dist/main.js --config FILE` refuses bad configs with exit
 * code 2 and names every bad key; a good one listens, answers MCP, and on SIGTERM exits 0 with
 * its upstream child processes gone. Plus unit tests of resolveConfig's defaults and env overrides.
 *
 * Needs the build in dist/ (`npm test` builds first; run `npm run build` before running this alone).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { ECHO_SERVER, ROOT, SLOW_SERVER, isAlive, openSession, post } from '../support/gateway.js';

const MAIN = resolve(ROOT, 'dist/main.js');
const UNSET = 'MCPGW_TEST_SURELY_UNSET_VAR_4F7A';

let dir: string;
const started: ChildProcess[] = [];

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The test's environment without anything that would override the file. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MCPGW_') && k !== UNSET) env[k] = v;
  return { ...env, ...extra };
}

function run(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Run {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.once('exit', (code, signal) => {
      // Let the pipes drain before the caller reads them.
      child.stdout!.once('close', () => res({ code, signal }));
      if (child.stdout!.closed) res({ code, signal });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

function writeConfig(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A YAML config with the two example upstreams. */
function goodYaml(extra = ''): string {
  return [
    'logLevel: warn',
    'upstreams:',
    '  - name: echo',
    '    transport: stdio',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(ECHO_SERVER)}]`,
    '  - name: slow',
    '    transport: stdio',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(SLOW_SERVER)}]`,
    extra,
  ].join('\n');
}

/** Child pids of `pid` (Linux /proc), or undefined where /proc does not tell. */
function childrenOf(pid: number): number[] | undefined {
  const tasks = `/proc/${pid}/task`;
  if (!existsSync(tasks)) return undefined;
  const pids: number[] = [];
  for (const tid of readdirSync(tasks)) {
    try {
      const text = readFileSync(`${tasks}/${tid}/children`, 'utf8').trim();
      if (text) pids.push(...text.split(/\s+/).map(Number));
    } catch {
      return undefined;
    }
  }
  return pids;
}

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-config-test-'));
});

afterAll(() => {
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('CLI: bad configs exit 2 and say why', () => {
  it('a config with many bad keys names every one of them', async () => {
    const file = writeConfig(
      'bad.yaml',
      [
        'bogusTopLevel: 1',
        'listen:',
        '  port: "x"',
        'upstreams:',
        '  - name: Bad_Name',
        '    transport: stdio',
        '    command: node',
        '  - name: no-command',
        '    transport: stdio',
        '  - name: pooled',
        '    transport: stdio',
        '    command: node',
        '    pool: { min: 5, max: 2 }',
        '  - name: pooled',
        '    transport: stdio',
        '    command: node',
        '    env:',
        `      TOKEN: "\${${UNSET}}"`,
      ].join('\n'),
    );
    const r = run(['--config', file]);
    const { code } = await r.exited;
    const stderr = r.stderr();
    expect(code, stderr).toBe(2);
    expect(stderr).toContain(file);
    expect(stderr).toMatch(/bogusTopLevel: unknown key/);
    expect(stderr).toMatch(/listen\.port: must be integer/);
    expect(stderr).toMatch(/upstreams\[0\]\.name: .*pattern/);
    expect(stderr).toMatch(/upstreams\[1\]\.command: is required/);
    expect(stderr).toMatch(/upstreams\[2\]\.pool\.min: must be <= pool\.max/);
    expect(stderr).toMatch(/upstreams\[3\]\.name: "pooled" is already used by upstreams\[2\]/);
    expect(stderr).toMatch(new RegExp(`upstreams\\[3\\]\\.env\\.TOKEN: environment variable ${UNSET} is not set`));
    // Nothing started: no listening line.
    expect(r.stdout()).not.toContain('listening');
  });

  it('a config file that does not exist → exit 2 naming it', async () => {
    const missing = join(dir, 'does-not-exist.yaml');
    const r = run(['--config', missing]);
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toContain(missing);
    expect(r.stderr()).toMatch(/cannot be read \(ENOENT\)/);
  });

  it('MCPGW_CONFIG naming a missing file → exit 2 naming it', async () => {
    const missing = join(dir, 'from-env.yaml');
    const r = run([], cleanEnv({ MCPGW_CONFIG: missing }));
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toContain(missing);
  });

  it('non-YAML garbage → exit 2', async () => {
    const file = writeConfig('garbage.yaml', 'upstreams: [\n  - {name: a\n:::: "\u0000\n');
    const r = run(['--config', file]);
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toContain(file);
    expect(r.stderr()).toMatch(/not valid YAML or JSON/);
  });

  it('YAML that is not a mapping → exit 2', async () => {
    const file = writeConfig('scalar.yaml', 'just a sentence, not a config\n');
    const r = run(['--config', file]);
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toMatch(/\(root\): the configuration must be a mapping/);
  });

  it('a bad MCPGW_PORT over a good file → exit 2 naming MCPGW_PORT', async () => {
    const file = writeConfig('good-for-bad-port.yaml', goodYaml());
    const r = run(['--config', file], cleanEnv({ MCPGW_PORT: 'eighty' }));
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toMatch(/MCPGW_PORT: "eighty" is not a port number/);
  });

  it('--check with a bad config → exit 2 naming every problem, nothing started', async () => {
    const file = writeConfig(
      'check-bad.yaml',
      goodYaml('limits: { maxInFlightPerClient: -1 }\nauth: { mode: introspection }'),
    );
    const r = run(['--check', '--config', file]);
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toMatch(/limits\.maxInFlightPerClient/);
    expect(r.stderr()).toMatch(/auth\.introspection: is required/);
    expect(r.stdout()).not.toContain('listening');
  });

  it('an unknown CLI flag → exit 2 with the usage', async () => {
    const r = run(['--no-such-flag']);
    const { code } = await r.exited;
    expect(code).toBe(2);
    expect(r.stderr()).toContain('Usage: mcp-gateway');
  });
});

describe('CLI: a good config', () => {
  it('--check → exit 0 with a summary, without starting the gateway', async () => {
    const file = writeConfig('check-good.yaml', goodYaml());
    const r = run(['--check', '--config', file]);
    const { code } = await r.exited;
    expect(code).toBe(0);
    const lines = r.stdout().split('\n');
    expect(lines[0]).toBe(`mcp-gateway: ${file}: OK (2 upstream(s): echo, slow; sessions: memory; auth: none)`);
    // What it checked follows: each upstream's lists, the catalog's totals, the checks run.
    expect(lines).toContain('  upstream echo (stdio, shared): 3 tools, 1 prompt, 1 resource, 1 resource template');
    expect(lines).toContain('  catalog: 8 tools, 1 prompt, 1 resource, 1 resource template');
    expect(r.stdout()).not.toContain('listening');
  });

  it(
    'listens, answers initialize, and on SIGTERM exits 0 with its upstream processes gone',
    { timeout: 90_000 },
    async () => {
      const file = writeConfig('good.yaml', goodYaml());
      const r = run(['--config', file], cleanEnv({ MCPGW_PORT: '0' }));
      let line: string | undefined;
      const early = r.exited.then(({ code }) => {
        throw new Error(`gateway exited early with ${code}: ${r.stderr()} ${r.stdout()}`);
      });
      early.catch(() => undefined);
      while (!line) {
        await Promise.race([new Promise((res) => setTimeout(res, 25)), early]);
        line = r
          .stdout()
          .split('\n')
          .find((l) => l.includes('listening'));
      }
      const match = /(http:\/\/127\.0\.0\.1:(\d+)\/mcp)\b/.exec(line);
      expect(match, line).not.toBeNull();
      const url = new URL(match![1]!);
      expect(Number(match![2])).toBeGreaterThan(0);

      // initialize by hand, then the rest of a session.
      const init = await post(url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli-test', version: '1' } },
      });
      expect(init.status).toBe(200);
      expect(init.json).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: '2025-06-18', serverInfo: { name: 'mcp-gateway' }, capabilities: { tools: {} } },
      });
      expect(init.headers.get('mcp-session-id')).toBeTruthy();

      const sid = await openSession(url);
      const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
      const pidOf = async (tool: string): Promise<number> => {
        const res = await post(
          url,
          { jsonrpc: '2.0', id: tool, method: 'tools/call', params: { name: tool, arguments: {} } },
          h,
        );
        expect(res.status).toBe(200);
        return (JSON.parse(res.json.result.content[0].text) as { pid: number }).pid;
      };
      const echoPid = await pidOf('echo__whoami');
      const slowPid = await pidOf('slow__pid');
      expect(echoPid).not.toBe(slowPid);
      expect(isAlive(echoPid)).toBe(true);
      expect(isAlive(slowPid)).toBe(true);

      const gatewayPid = r.child.pid!;
      const children = childrenOf(gatewayPid);
      const upstreamPids = new Set([echoPid, slowPid, ...(children ?? [])]);
      if (children) expect(children).toEqual(expect.arrayContaining([echoPid, slowPid]));

      r.child.kill('SIGTERM');
      const { code, signal } = await r.exited;
      expect(signal).toBeNull();
      expect(code, r.stderr()).toBe(0);
      for (const pid of upstreamPids) expect(isAlive(pid), `upstream pid ${pid} still alive`).toBe(false);
      expect(isAlive(gatewayPid)).toBe(false);
    },
  );
});

describe('resolveConfig', () => {
  const minimal = { upstreams: [{ name: 'echo', transport: 'stdio', command: 'node' }] };

  it('applies the defaults', () => {
    const c = resolveConfig(minimal, {});
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 8080, backlog: 4096 });
    expect(c.path).toBe('/mcp');
    expect(c.logLevel).toBe('info');
    expect(c.limits.bodyBytes).toBe(4 * 1024 * 1024);
    expect(c.security.allowedOrigins).toEqual([]);
    expect(c.sessions).toMatchObject({ store: 'memory', ttlSeconds: 3600 });
    expect(c.sse.keepAliveMs).toBe(15000);
    expect(c.pagination.pageSize).toBe(500);
    expect(c.shutdown.drainMs).toBe(10000);
    expect(c.upstreams).toHaveLength(1);
    expect(c.upstreams[0]).toMatchObject({
      name: 'echo',
      transport: 'stdio',
      command: 'node',
      args: [],
      env: {},
      mode: 'shared',
      timeoutMs: 60000,
      maxTimeoutMs: 600000,
      pool: { min: 1, max: 4, maxInFlight: 32, queueSize: 1000, queueTimeoutMs: 5000, idleTimeoutMs: 300000 },
    });
    expect(c.upstreams[0]!.prefix).toBeUndefined();
  });

  it('keeps what the file says over the defaults', () => {
    const c = resolveConfig(
      {
        listen: { host: '0.0.0.0', port: 9000 },
        path: '/gateway',
        logLevel: 'debug',
        upstreams: [{ name: 'echo', transport: 'stdio', command: 'node', args: ['a'], pool: { max: 2 } }],
      },
      {},
    );
    expect(c.listen).toEqual({ host: '0.0.0.0', port: 9000, backlog: 4096 });
    expect(c.path).toBe('/gateway');
    expect(c.logLevel).toBe('debug');
    expect(c.upstreams[0]).toMatchObject({ args: ['a'] });
    expect(c.upstreams[0]!.pool).toMatchObject({ min: 1, max: 2 });
  });

  it('does not modify the object it is given', () => {
    const source = structuredClone(minimal);
    resolveConfig(source, { MCPGW_PORT: '1234' });
    expect(source).toEqual(minimal);
  });

  it('MCPGW_HOST, MCPGW_PORT and MCPGW_LOG_LEVEL override the file', () => {
    const file = { ...minimal, listen: { host: '127.0.0.1', port: 8080 }, logLevel: 'warn' };
    const c = resolveConfig(file, { MCPGW_HOST: '0.0.0.0', MCPGW_PORT: '9123', MCPGW_LOG_LEVEL: 'debug' });
    expect(c.listen).toEqual({ host: '0.0.0.0', port: 9123, backlog: 4096 });
    expect(c.logLevel).toBe('debug');
  });

  it('each override works alone and leaves the rest to the file or the defaults', () => {
    expect(resolveConfig(minimal, { MCPGW_HOST: '::1' }).listen).toEqual({ host: '::1', port: 8080, backlog: 4096 });
    expect(resolveConfig({ ...minimal, listen: { host: '10.0.0.1' } }, { MCPGW_PORT: '0' }).listen).toEqual({
      host: '10.0.0.1',
      port: 0,
      backlog: 4096,
    });
    const c = resolveConfig({ ...minimal, listen: { port: 7000 } }, { MCPGW_LOG_LEVEL: 'silent' });
    expect(c.logLevel).toBe('silent');
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 7000, backlog: 4096 });
  });

  it('rejects bad override values, naming them', () => {
    for (const port of ['x', '-1', '65536', '1.5']) {
      const err = catchConfigError(() => resolveConfig(minimal, { MCPGW_PORT: port }));
      expect(err.problems).toContain(`MCPGW_PORT: "${port}" is not a port number`);
    }
    const err = catchConfigError(() => resolveConfig(minimal, { MCPGW_LOG_LEVEL: 'loud' }));
    expect(err.problems.join('\n')).toMatch(/^logLevel: must be one of/m);
  });

  it('substitutes ${VAR} in upstream command, args and env from the given environment', () => {
    const c = resolveConfig(
      {
        upstreams: [
          { name: 'echo', transport: 'stdio', command: '${BIN}', args: ['--key=${KEY}'], env: { TOKEN: 'x-${KEY}-y' } },
        ],
      },
      { BIN: '/usr/bin/node', KEY: 's3cret' },
    );
    expect(c.upstreams[0]).toMatchObject({
      command: '/usr/bin/node',
      args: ['--key=s3cret'],
      env: { TOKEN: 'x-s3cret-y' },
    });
  });

  it('a ConfigError lists every problem, one per key', () => {
    const err = catchConfigError(() =>
      resolveConfig(
        {
          nope: true,
          upstreams: [
            { name: 'a', transport: 'stdio', command: 'node', timeoutMs: 10, maxTimeoutMs: 5 },
            { name: 'a', transport: 'stdio', command: 'node', args: ['${MISSING_ONE}'] },
          ],
        },
        {},
      ),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems).toEqual(
      expect.arrayContaining([
        'nope: unknown key',
        'upstreams[0].timeoutMs: must be <= maxTimeoutMs (5)',
        'upstreams[1].name: "a" is already used by upstreams[0]',
        'upstreams[1].args[0]: environment variable MISSING_ONE is not set',
      ]),
    );
    expect(err.problems).toHaveLength(4);
    for (const p of err.problems) expect(err.message).toContain(p);
  });

  it('a config of the wrong shape gets problems, not a crash', () => {
    const cases: Array<[unknown, NodeJS.ProcessEnv, RegExp]> = [
      [{ ...minimal, listen: 'x' }, { MCPGW_HOST: '0.0.0.0', MCPGW_PORT: '1' }, /^listen: must be object$/m],
      [{ ...minimal, listen: null }, { MCPGW_PORT: '1' }, /^listen: must be object$/m],
      [{ upstreams: 'x' }, {}, /^upstreams: must be array$/m],
      [{ upstreams: ['x', null] }, {}, /^upstreams\[1\]: must be object$/m],
      [
        { upstreams: [{ name: 'a', transport: 'stdio', command: 5, args: 'x', env: [1], pool: 'big' }] },
        {},
        /^upstreams\[0\]\.command: must be string$/m,
      ],
      [{ ...minimal, sessions: 'x' }, {}, /^sessions: must be object$/m],
    ];
    for (const [source, env, expected] of cases) {
      const err = catchConfigError(() => resolveConfig(source, env));
      expect(err.problems.join('\n')).toMatch(expected);
    }
  });

  it('a config without upstreams, or not a mapping, is refused', () => {
    expect(catchConfigError(() => resolveConfig({}, {})).problems).toContain('upstreams: is required');
    expect(catchConfigError(() => resolveConfig({ upstreams: [] }, {})).problems.join('\n')).toMatch(/^upstreams: /m);
    expect(catchConfigError(() => resolveConfig(['a'], {})).problems).toEqual([
      '(root): the configuration must be a mapping of keys',
    ]);
    expect(catchConfigError(() => resolveConfig(null, {})).problems).toEqual([
      '(root): the configuration must be a mapping of keys',
    ]);
  });
});

function catchConfigError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}
