/**
 * The full config check (`checkConfig`, what `mcp-gateway --check` runs and a reload must run):
 * stdio commands on PATH, collisions and the virtual servers' overrides against the upstreams'
 * real lists (started only to list them), globs that select nothing as warnings. And the CLI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { checkConfig } from '../../src/gateway/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { childPidsRunning } from '../support/child-processes.js';
import { ECHO_SERVER, ROOT, exampleConfig, startGateway, stdioUpstream } from '../support/gateway.js';
import { EVERYTHING, everythingUpstream } from '../support/everything.js';
import { freePort } from '../support/redis.js';

const log = createLogger('silent');
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-check-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('checkConfig', () => {
  it('passes a good config, with servers, and leaves no upstream running', async () => {
    const config = exampleConfig({
      servers: [
        {
          path: '/mcp/e',
          tools: ['echo__*'],
          overrides: { echo__echo: { name: 'say', arguments: { defaults: { text: 'hi' } } } },
        },
      ],
    });
    expect(await checkConfig(config, { log })).toMatchObject({ errors: [], warnings: [] });
    expect(childPidsRunning(ECHO_SERVER)).toEqual([]);
  });

  it('warns of rate-limit rules that select nothing: a server, a tool of the listed catalog, a rule never matched', async () => {
    const rules = [
      { name: 'a', match: { servers: ['mail*'] }, limit: 1, windowMs: 1000 },
      { name: 'b', match: { tools: ['echo__echo', 'zzz*'] }, limit: 1, windowMs: 1000 },
      { name: 'c', key: 'tool', match: { methods: ['prompts/get'] }, limit: 1, windowMs: 1000 },
    ];
    const config = exampleConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER)], rateLimits: { rules } });
    const { errors, warnings } = await checkConfig(config, { log });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      'rateLimits rule "a": servers "mail*" fits no upstream',
      'rateLimits rule "b": tools "zzz*" fits no tool',
      'rateLimits rule "c": can never match (tools or key "tool" count tools/call only, methods leave it out)',
    ]);
  });

  it('names a command that is not on PATH, and a path that is no executable', async () => {
    const config = exampleConfig({
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER),
        { name: 'gone', transport: 'stdio', command: 'mcpgw-no-such-command-7d1' },
        { name: 'rel', transport: 'stdio', command: './nothing/here' },
      ],
    });
    const { errors, warnings } = await checkConfig(config, { log, deadlineMs: 5000 });
    expect(errors).toEqual([
      expect.stringMatching(/^upstreams\[1\]\.command: "mcpgw-no-such-command-7d1" is not found on PATH/),
      expect.stringMatching(/^upstreams\[2\]\.command: "\.\/nothing\/here" is not an executable file/),
    ]);
    expect(warnings).toEqual([
      'upstream "gone" did not come up during the check: its names were not checked for collisions or overrides',
      'upstream "rel" did not come up during the check: its names were not checked for collisions or overrides',
    ]);
  });

  it('names a resource URI collision with the key that fixes it', async () => {
    const { errors } = await checkConfig(
      exampleConfig({ upstreams: [everythingUpstream('a'), everythingUpstream('b')] }),
      { log },
    );
    expect(errors).toEqual([expect.stringContaining('set `resources: { uris: prefixed }` on upstream')]);
    const prefixed = { resources: { uris: 'prefixed' } };
    expect(
      (
        await checkConfig(
          exampleConfig({ upstreams: [everythingUpstream('a', prefixed), everythingUpstream('b', prefixed)] }),
          { log },
        )
      ).errors,
    ).toEqual([]);
  });

  it('names overrides that fit no tool, and warns of globs that select nothing', async () => {
    const config = exampleConfig({
      servers: [
        {
          path: '/mcp/e',
          tools: ['echo__*', 'nothing__*'],
          prompts: ['echo__nope'],
          overrides: { echo__ech: { title: 'x' } },
        },
      ],
    });
    expect(await checkConfig(config, { log })).toMatchObject({
      errors: [
        'servers[0].overrides.echo__ech: no tool "echo__ech" in the catalog (names are the exposed ones, prefix included)',
      ],
      warnings: [
        'servers[0].tools[1]: "nothing__*" selects nothing in the catalog',
        'servers[0].prompts[0]: "echo__nope" selects nothing in the catalog',
      ],
    });
  });
});

describe('mcp-gateway --check', () => {
  const main = resolve(ROOT, 'dist/main.js');
  const check = (name: string, yaml: string) => {
    const file = join(dir, name);
    writeFileSync(file, yaml);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MCPGW_')));
    return spawnSync(process.execPath, [main, '--check', '--config', file], { env, encoding: 'utf8', timeout: 60_000 });
  };
  const upstream = (name: string, script: string, extra = '') =>
    `  - { name: ${name}, transport: stdio, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(script)}${script === EVERYTHING ? ', stdio' : ''}]${extra} }\n`;

  it('exits 2 naming the problems only the upstreams show', () => {
    const r = check('collide.yaml', `upstreams:\n${upstream('a', EVERYTHING)}${upstream('b', EVERYTHING)}`);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('invalid configuration');
    expect(r.stderr).toContain('resources: { uris: prefixed }');
  });

  it('passes a config with a grant authorization-code upstream, which the gateway itself runs', async () => {
    // Nothing listens at the upstream's port: the check warns it did not come up, and is done.
    const closed = await freePort();
    const yaml = [
      'listen: { host: 127.0.0.1, port: 0 }',
      'logLevel: silent',
      `auth: { mode: jwt, resource: http://127.0.0.1:${closed}/mcp, issuer: http://127.0.0.1:${closed}/issuer, jwksUrl: http://127.0.0.1:${closed}/jwks, authorizationServers: [http://127.0.0.1:${closed}/issuer] }`,
      'upstreams:',
      `  - { name: tickets, transport: http, url: "http://127.0.0.1:${closed}/mcp", discovery: anonymous, oauth: { grant: authorization-code, authorizationUrl: "http://127.0.0.1:${closed}/authorize", tokenUrl: "http://127.0.0.1:${closed}/token", clientId: gw, clientSecret: s3cret } }`,
      '',
    ].join('\n');
    const r = check('authorization-code.yaml', yaml);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr).toContain('warning: upstream "tickets" did not come up during the check');
    expect(r.stdout).toContain('OK (1 upstream(s): tickets; sessions: memory; auth: jwt)');
    expect(r.status).toBe(0);
    // The same file is one the gateway starts with (and serves its health on).
    const gw = await startGateway(loadConfig(join(dir, 'authorization-code.yaml'), {}));
    try {
      expect((await fetch(new URL('/healthz', gw.base))).status).toBe(200);
    } finally {
      await gw.stop();
    }
  });

  it('never prints a stack trace: files that cannot be read or parsed are named, exit 2', () => {
    for (const [name, yaml] of [
      ['unclosed.yaml', 'upstreams: [\n'],
      ['list.yaml', '- a\n- b\n'],
      ['empty.yaml', ''],
    ]) {
      const r = check(name, yaml);
      expect(r.stderr).toContain('invalid configuration');
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.status).toBe(2);
    }
  });

  it('prints what it checked: each upstream with its counts, each server, the catalog', () => {
    const yaml = `upstreams:\n${upstream('echo', ECHO_SERVER)}${upstream('ev', EVERYTHING, ', mode: per-session')}  - { name: gone, transport: stdio, command: ${JSON.stringify(process.execPath)}, args: ['-e', 'process.exit(3)'] }\nservers:\n  - { path: /mcp/x, tools: ['echo__echo', 'ev__echo'], prompts: ['ev__*'] }\n`;
    const r = check('counts.yaml', yaml);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toContain('OK (3 upstream(s): echo, ev, gone; servers: /mcp/x;');
    expect(lines[1]).toMatch(
      /^ {2}upstream echo \(stdio, shared\): [1-9]\d* tools?, [1-9]\d* prompts?, \d+ resources?, \d+ resource templates?$/,
    );
    expect(lines[2]).toMatch(
      /^ {2}upstream ev \(stdio, per-session\): [1-9]\d* tools, [1-9]\d* prompts, [1-9]\d* resources, [1-9]\d* resource templates$/,
    );
    expect(lines[3]).toBe('  upstream gone (stdio, shared): did not come up: not listed');
    expect(lines[4]).toMatch(/^ {2}server \/mcp\/x: 2 tools, [1-9]\d* prompts?, 0 resources, 0 resource templates$/);
    // The catalog's counts are the upstreams' that came up, added.
    const count = (line: string, i: number) => Number(line.split(': ')[1]!.split(', ')[i]!.split(' ')[0]);
    for (let i = 0; i < 4; i++) expect(count(lines[5]!, i)).toBe(count(lines[1]!, i) + count(lines[2]!, i));
    expect(lines[5]).toMatch(/^ {2}catalog: /);
    expect(lines[6]).toMatch(
      /^ {2}checked: schema and cross-checks, .*stdio commands on PATH, name and URI collisions, servers' overrides and globs$/,
    );
    expect(lines).toHaveLength(7);
  });

  it('exits 0 with a warning for a glob that selects nothing', () => {
    const r = check(
      'warn.yaml',
      `upstreams:\n${upstream('echo', ECHO_SERVER)}servers:\n  - { path: /mcp/x, tools: ['echo__echo', 'zzz*'] }\n`,
    );
    expect(r.stderr).toContain('warning: servers[0].tools[1]: "zzz*" selects nothing in the catalog');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('OK (1 upstream(s): echo; servers: /mcp/x;');
  });
});
