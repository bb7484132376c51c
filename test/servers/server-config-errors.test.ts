/**
 * Bad `servers:` input. What the file alone shows is a config error at load (every problem
 * named at once); what needs the upstreams' catalogs (override targets, their schemas, names
 * that collide after a rename) stops the start-up, once the catalogs are in, naming each
 * problem, and leaves no upstream process behind. The same check replaces servers at runtime
 * (setServers) and changes nothing when it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError } from '../../src/config/load.js';
import { ServerViewsError } from '../../src/gateway/server-views.js';
import { createLogger } from '../../src/observability/logger.js';
import { childPidsRunning } from '../support/child-processes.js';
import { ECHO_SERVER, exampleConfig, startGateway, type RunningGateway } from '../support/gateway.js';

function loadProblems(servers: unknown[]): string[] {
  try {
    exampleConfig({ servers });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

async function startProblems(servers: unknown[]): Promise<string[]> {
  const config = exampleConfig({ servers });
  const err = await buildApp(config, { logger: createLogger('silent'), defaultMetrics: false }).then(
    async (gw) => {
      await gw.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServerViewsError);
  return (err as ServerViewsError).problems;
}

describe('servers: errors in the file', () => {
  it('refuses two servers on one path, and a server on the main path', () => {
    expect(loadProblems([{ path: '/mcp/a' }, { path: '/mcp/a/' }, { path: '/mcp' }])).toEqual([
      'servers[1].path: "/mcp/a/" is already the path of servers[0]; each virtual server needs a path of its own',
      'servers[2].path: "/mcp" is the main endpoint (top-level `path`), which serves the whole catalog',
    ]);
  });

  it('refuses the gateway’s own routes, duplicate names, two overrides taking one new name, a path that is no path', () => {
    const problems = loadProblems([
      { path: '/healthz' },
      {
        name: 'x',
        path: '/a',
        overrides: {
          echo__echo: { name: 'same' },
          echo__add: { name: 'same', arguments: { fixed: { a: 1 }, defaults: { a: 2 } } },
        },
      },
      { name: 'x', path: '/b' },
      { path: 'no-slash' },
    ]);
    expect(problems).toEqual([
      expect.stringMatching(/^servers\[3\]\.path: must match pattern/),
      'servers[0].path: "/healthz" is one of the gateway\'s own routes',
      'servers[1].overrides.echo__add.name: "same" is also the new name of echo__echo',
      'servers[1].overrides.echo__add.arguments.defaults.a: is also fixed (a fixed argument always wins; drop one of them)',
      'servers[2].name: "x" is already used by servers[1]',
    ]);
  });

  it('refuses unknown override keys', () => {
    expect(loadProblems([{ path: '/a', overrides: { echo__echo: { rename: 'x' } } }])).toEqual([
      'servers[0].overrides.echo__echo.rename: unknown key',
    ]);
  });
});

describe('servers: errors against the catalog (start-up, after discovery)', () => {
  it('names an override of a tool that does not exist, with the likely name', async () => {
    expect(
      await startProblems([
        { path: '/a', tools: ['*'], overrides: { echo: { description: 'x' }, nothing__here: { title: 't' } } },
      ]),
    ).toEqual([
      'servers[0].overrides.echo: no tool "echo" in the catalog (names are the exposed ones, prefix included) (did you mean "echo__echo"?)',
      'servers[0].overrides.nothing__here: no tool "nothing__here" in the catalog (names are the exposed ones, prefix included)',
    ]);
  });

  it('names a fixed or default argument the tool’s schema does not have', async () => {
    expect(
      await startProblems([
        {
          path: '/a',
          tools: ['echo__*'],
          overrides: { echo__echo: { arguments: { fixed: { txt: 'x' }, defaults: { text: 'ok', loud: true } } } },
        },
      ]),
    ).toEqual([
      'servers[0].overrides.echo__echo.arguments.fixed.txt: tool "echo__echo" has no argument "txt" in its inputSchema',
      'servers[0].overrides.echo__echo.arguments.defaults.loud: tool "echo__echo" has no argument "loud" in its inputSchema',
    ]);
  });

  it('names an override whose new name collides with another tool on the server', async () => {
    expect(
      await startProblems([{ path: '/a', tools: ['echo__*'], overrides: { echo__add: { name: 'echo__echo' } } }]),
    ).toEqual([
      'servers[0]: two tools are offered as "echo__echo" (echo__echo and echo__add): rename one of them in servers[0].overrides',
    ]);
  });

  it('names an override of a tool the server does not select', async () => {
    expect(
      await startProblems([{ path: '/a', tools: ['echo__echo'], overrides: { echo__add: { title: 'x' } } }]),
    ).toEqual(['servers[0].overrides.echo__add: "echo__add" is not selected by servers[0].tools']);
  });

  it('leaves no upstream process behind', () => {
    expect(childPidsRunning(ECHO_SERVER)).toEqual([]);
  });
});

describe('servers replaced at runtime (setServers)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(exampleConfig({ servers: [{ path: '/mcp/a', tools: ['echo__echo'] }] }));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('changes nothing when the new servers do not fit the catalog', async () => {
    expect(() =>
      gw.gateway.setServers([
        {
          path: '/mcp/a',
          tools: ['*'],
          prompts: [],
          resources: [],
          overrides: { nope: { arguments: { fixed: {}, defaults: {} } } },
          principals: [],
          requiredScopes: [],
        },
      ]),
    ).toThrow(ServerViewsError);
    expect(gw.gateway.server.serverPaths).toEqual(['/mcp/a']);
  });

  it('applies new servers at once, warns of globs that select nothing, names paths that need a restart', () => {
    const next = exampleConfig({
      servers: [
        { path: '/mcp/a', tools: ['echo__add', 'nothing*'] },
        { path: '/mcp/new', tools: ['*'] },
      ],
    }).servers;
    expect(gw.gateway.setServers(next)).toEqual({
      warnings: ['servers[0].tools[1]: "nothing*" selects nothing in the catalog'],
      needsRestart: ['/mcp/new'],
    });
  });
});

describe('the example of docs/virtual-servers.md', () => {
  it('is a config the gateway accepts', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const { resolveConfig } = await import('../../src/config/load.js');
    const { ROOT } = await import('../support/gateway.js');
    const page = readFileSync(`${ROOT}/docs/virtual-servers.md`, 'utf8');
    const block = /```yaml\n([\s\S]*?)```/.exec(page.slice(page.indexOf('# Virtual servers')))![1]!;
    const config = resolveConfig(parse(block), { READER_KEY_SHA256: 'a'.repeat(64), CI_KEY_SHA256: 'b'.repeat(64) });
    expect(config.servers.map((s) => s.path)).toEqual(['/mcp/reader', '/mcp/ci']);
    expect(config.servers[0]!.overrides['docs-eu__search']!.arguments.fixed).toEqual({ index: 'handbook' });
  });
});
