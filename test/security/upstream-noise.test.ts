/**
 * An upstream's repeated failures do not flood the gateway's log. A stdio upstream whose command
 * does not exist is retried forever: the log has its first failure, then at most one line per
 * `logRepeatMs` saying how many were left out, and `mcpgw_upstream_start_failures_total` counts
 * every attempt (`mcpgw_upstream_restarts_total` counts workers that ran, then died). Per-session
 * workers that cannot start are counted and throttled alike. A server that writes 1,000
 * non-JSON lines to stdout gets them counted in `mcpgw_upstream_stdout_garbage_total`, a bounded
 * number of log lines, and its JSON calls still work. Real gateways, real child processes, the
 * gateway's own pino log captured.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type Gateway } from '../../src/app.js';
import { ECHO_SERVER, exampleConfig, openSession, post, stdioUpstream } from '../support/gateway.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { until } from '../support/wait.js';
import { capturingLogger } from '../support/log-lines.js';

type Line = Record<string, unknown> & { msg?: string; upstream?: string; suppressed?: number };

let gateway: Gateway | undefined;
let url: URL;
let lines: Line[] = [];
let scratch: string | undefined;

async function start(overrides: Record<string, unknown>): Promise<void> {
  lines = [];
  const config = exampleConfig({ logLevel: 'info', ...overrides });
  const log = capturingLogger('info', lines);
  gateway = await buildApp(config, { logger: log, defaultMetrics: false });
  url = new URL(config.path, await gateway.app.listen({ host: '127.0.0.1', port: 0 }));
}

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function metric(name: string, upstream: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  const m = new RegExp(`^${name}\\{upstream="${upstream}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The log lines about `upstream` (its workers are labelled `name#index`). */
function about(upstream: string): Line[] {
  return lines.filter(
    (l) => typeof l.upstream === 'string' && (l.upstream === upstream || l.upstream.startsWith(`${upstream}#`)),
  );
}

const MISSING = '/nonexistent/mcp-gateway-test/no-such-server';

describe('an upstream that cannot start', () => {
  it('logs its first failure, then one line per logRepeatMs with the count left out; every attempt is counted', async () => {
    await start({
      logRepeatMs: 1000,
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER),
        { name: 'missing', transport: 'stdio', command: MISSING, args: [] },
      ],
    });
    // Restarts back off from 100 ms: six attempts take a few seconds, and cross the interval at least once.
    await until(
      'six failed starts',
      async () => (await metric('mcpgw_upstream_start_failures_total', 'missing')) >= 6,
      20_000,
    );
    await until(
      'a line that stands for failures left out',
      () => about('missing').some((l) => (l.suppressed ?? 0) > 0),
      20_000,
    );
    const failures = await metric('mcpgw_upstream_start_failures_total', 'missing');

    const failed = about('missing').filter((l) => l.msg === 'upstream worker failed to start');
    expect(failed[0]!.suppressed).toBeUndefined();
    expect(String(failed[0]!.err)).toContain('ENOENT');
    // Each attempt is logged or counted in a later line; fewer lines than attempts.
    const reported = failed.length + failed.reduce((n, l) => n + (l.suppressed ?? 0), 0);
    expect(reported).toBeLessThanOrEqual(failures);
    expect(failed.length).toBeLessThan(failures);
    // Nothing else per attempt: not the exit of a process that never ran, not "restarting".
    const others = about('missing').filter(
      (l) =>
        l.msg !== 'upstream worker failed to start' &&
        l.msg !== 'upstream unavailable at start-up; retrying in the background',
    );
    expect(others).toEqual([]);
    // It never ran, so it never restarted after running.
    expect(await metric('mcpgw_upstream_restarts_total', 'missing')).toBe(0);

    // The rest of the gateway works.
    const sid = await openSession(url);
    const r = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo__add', arguments: { a: 2, b: 3 } } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(r.json.result.content[0].text).toBe('5');
  }, 40_000);

  it('per-session: a worker that cannot start is counted, and logged once per logRepeatMs', async () => {
    // The echo server, until a flag file appears: then every new process exits at once.
    scratch = mkdtempSync(join(tmpdir(), 'mcpgw-noise-'));
    const flag = join(scratch, 'broken');
    const script = `if (require('node:fs').existsSync(${JSON.stringify(flag)})) process.exit(3); import(${JSON.stringify(pathToFileURL(ECHO_SERVER).href)});`;
    await start({
      upstreams: [
        {
          name: 'flaky',
          transport: 'stdio',
          command: process.execPath,
          args: ['-e', script],
          mode: 'per-session',
          pool: { spares: 0 },
        },
      ],
    });
    writeFileSync(flag, '');
    const sessions = await Promise.all([openSession(url), openSession(url), openSession(url)]);
    for (const sid of sessions) {
      const r = await post(
        url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flaky__add', arguments: { a: 1, b: 1 } } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(r.json.error.data.type).toBe('UPSTREAM_UNAVAILABLE');
    }
    expect(await metric('mcpgw_upstream_start_failures_total', 'flaky')).toBe(3);
    expect(await metric('mcpgw_upstream_restarts_total', 'flaky')).toBe(0);
    expect(about('flaky').filter((l) => l.msg === 'per-session worker failed to start')).toHaveLength(1);
    expect(about('flaky').filter((l) => l.msg === 'upstream exited')).toEqual([]);

    // Fixed, the next session's worker starts.
    rmSync(flag);
    const sid = await openSession(url);
    const r = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flaky__add', arguments: { a: 1, b: 1 } } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(r.json.result.content[0].text).toBe('2');
    // The two failures the log left out are told once it recovers.
    expect(
      about('flaky').find((l) => l.msg === 'per-session worker started after failed starts')?.failedStartsNotLogged,
    ).toBe(2);
  }, 40_000);
});

/** A raw stdio MCP server with one tool, `chatter`, that writes 1,000 non-JSON lines to stdout before it answers. */
const CHATTY_SERVER = rawStdioServer(
  `return m.method === 'initialize'
    ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'chatty', version: '1' } }
    : m.method === 'tools/list' ? { tools: [tool] }
    : m.method === 'tools/call' ? { content: [{ type: 'text', text: 'done' }] }
    : {};`,
  "const tool = { name: 'chatter', inputSchema: { type: 'object' } };",
  `if (m.method !== 'tools/call') return;
  let noise = '';
  for (let i = 0; i < 1000; i++) noise += 'debug: working on step ' + i + '\\n';
  process.stdout.write(noise);`,
);

describe('a stdio server that writes non-JSON lines to stdout', () => {
  it('has them counted, logged a bounded number of times, and its calls still answered', async () => {
    await start({
      upstreams: [
        {
          name: 'chatty',
          transport: 'stdio',
          command: process.execPath,
          args: ['-e', CHATTY_SERVER],
          pool: { min: 1, max: 1 },
        },
      ],
    });
    const sid = await openSession(url);
    const call = () =>
      post(
        url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chatty__chatter', arguments: {} } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
    expect((await call()).json.result.content[0].text).toBe('done');
    // The lines came before the answer on the same pipe: all read by now.
    expect(await metric('mcpgw_upstream_stdout_garbage_total', 'chatty')).toBe(1000);
    const noted = about('chatty').filter((l) => l.msg === 'upstream wrote a line that is not JSON');
    expect(noted).toHaveLength(1);
    expect(noted[0]!.line).toBe('debug: working on step 0');

    expect((await call()).json.result.content[0].text).toBe('done');
    expect(await metric('mcpgw_upstream_stdout_garbage_total', 'chatty')).toBe(2000);
    expect(about('chatty').filter((l) => l.msg === 'upstream wrote a line that is not JSON')).toHaveLength(1);
    const status = (await (await fetch(new URL('/readyz', url))).json()) as {
      upstreams: Record<string, { inFlight: number }>;
    };
    expect(status.upstreams.chatty!.inFlight).toBe(0);
  });
});
