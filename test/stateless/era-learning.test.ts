/**
 * `upstreams[].protocolVersion`: `auto` learns each upstream's era (server/discover, else
 * initialize, logged), a pinned revision is spoken without trying the other one, and a
 * 2026-07-28 pin needs an http upstream. Real child processes over loopback HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { openSession, post, stdioUpstream, toolText, ECHO_SERVER, MCP_HEADERS } from '../support/gateway.js';
import {
  httpUpstream,
  readRecording,
  startEchoHttp,
  startStatelessFixture,
  type HttpServerProcess,
} from '../support/http-upstream.js';
import { statelessRequest } from '../support/stateless.js';
import { freePort } from '../support/redis.js';
import { until } from '../support/wait.js';

interface Started {
  base: string;
  url: URL;
  logs: Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** A gateway in this process whose log lines the test reads. */
async function start(upstream: Record<string, unknown>): Promise<Started> {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = resolveConfig({ listen: { host: '127.0.0.1', port: 0 }, logLevel: 'warn', upstreams: [upstream] }, {});
  const gateway = await buildApp(config, { logger: pino({ level: 'warn' }, sink), defaultMetrics: false });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  return { base: address, url: new URL('/mcp', address), logs, stop: () => gateway.close() };
}

async function readyz(g: Started): Promise<Record<string, Record<string, unknown>>> {
  return ((await (await fetch(`${g.base}/readyz`)).json()) as { upstreams: Record<string, Record<string, unknown>> })
    .upstreams;
}

async function callEcho(url: URL, text: string): Promise<string> {
  const sid = await openSession(url);
  const r = await post(
    url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text } } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
  return toolText(r.json.result);
}

let dir: string;
const running: Array<{ stop(): Promise<void> }> = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-era-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('protocolVersion: auto', () => {
  it('a 2025-only upstream refuses server/discover: the gateway says so and speaks 2025 to it', async () => {
    const record = join(dir, 'auto.jsonl');
    const echo: HttpServerProcess = await startEchoHttp(0, ['--record', record]);
    running.push(echo);
    const g = await start(httpUpstream('echo', echo.url, { prefix: '' }));
    running.unshift(g);
    expect((await readyz(g)).echo).toMatchObject({ state: 'ready', era: 'session' });
    expect(g.logs.some((l) => l.upstream === 'echo' && String(l.msg).includes('server/discover failed'))).toBe(true);
    expect(await callEcho(g.url, 'hi')).toContain('hi');
    // It was asked first, then initialized.
    const methods = readRecording(record).map((m: { method?: string }) => m.method);
    expect(methods.indexOf('server/discover')).toBeGreaterThanOrEqual(0);
    expect(methods.indexOf('server/discover')).toBeLessThan(methods.indexOf('initialize'));
  });

  it('an upstream whose discover fails falls back to 2025 (logged); one that speaks no 2025 either is down, not fatal', async () => {
    const broken = await startStatelessFixture(['--discover-fails']);
    running.push(broken);
    const g = await start(httpUpstream('broken', broken.url, { prefix: '' }));
    running.unshift(g);
    expect(g.logs.some((l) => l.upstream === 'broken' && String(l.msg).includes('server/discover failed'))).toBe(true);
    const status = (await readyz(g)).broken!;
    expect(status.era).not.toBe('modern');
    expect(status.state).toBe('down');
    // The gateway itself serves on: a session opens, and lists nothing of that upstream.
    const sid = await openSession(g.url);
    const list = await post(
      g.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(list.json.result.tools).toEqual([]);
  });
});

describe('protocolVersion: auto, an upstream down at start-up', () => {
  it('joins the catalog in the era it speaks once it comes up', async () => {
    const port = await freePort();
    const g = await start(
      httpUpstream('late', `http://127.0.0.1:${port}/mcp`, { prefix: '', health: { intervalMs: 200, timeoutMs: 500 } }),
    );
    running.unshift(g);
    expect((await readyz(g)).late!.state).toBe('down');
    running.push(await startStatelessFixture([], port));
    await until(
      'its 2026 tools are listed',
      async () =>
        (
          await post(g.url, statelessRequest(1, 'tools/list').body, statelessRequest(1, 'tools/list').headers)
        ).json.result?.tools?.some((t: { name: string }) => t.name === 'test_input_required_result_elicitation') ===
        true,
      20_000,
    );
    expect((await readyz(g)).late).toMatchObject({ era: 'modern', state: 'ready' });
  });
});

describe('a pinned protocolVersion', () => {
  it('a 2025 pin initializes at once, no server/discover', async () => {
    const record = join(dir, 'pinned.jsonl');
    const echo = await startEchoHttp(0, ['--record', record]);
    running.push(echo);
    const g = await start(httpUpstream('echo', echo.url, { prefix: '', protocolVersion: '2025-06-18' }));
    running.unshift(g);
    expect((await readyz(g)).echo).toMatchObject({ era: 'session', protocolVersion: '2025-06-18' });
    expect(await callEcho(g.url, 'pinned')).toContain('pinned');
    const methods = readRecording(record).map((m: { method?: string }) => m.method);
    expect(methods).not.toContain('server/discover');
    expect(
      readRecording(record).find((m: { method?: string }) => m.method === 'initialize').params.protocolVersion,
    ).toBe('2025-06-18');
  });

  it("a 2026-07-28 pin speaks only that, to 2025 sessions' calls too", async () => {
    const modern = await startStatelessFixture();
    running.push(modern);
    const g = await start(httpUpstream('modern', modern.url, { prefix: '', protocolVersion: '2026-07-28' }));
    running.unshift(g);
    expect((await readyz(g)).modern).toMatchObject({ state: 'ready', era: 'modern' });
    // A 2025 session's plain call reaches it, spoken in 2026.
    const sid = await openSession(g.url);
    const r = await post(
      g.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      { ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(toolText(r.json.result)).toBe('echo: x');
  });

  it('a 2026-07-28 pin on a stdio upstream is a config error', () => {
    expect(() =>
      resolveConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER, { protocolVersion: '2026-07-28' })] }, {}),
    ).toThrow(ConfigError);
    expect(() =>
      resolveConfig({ upstreams: [stdioUpstream('echo', ECHO_SERVER, { protocolVersion: 'auto' })] }, {}),
    ).not.toThrow();
    expect(() =>
      resolveConfig(
        { upstreams: [httpUpstream('x', 'http://127.0.0.1:1/mcp', { protocolVersion: '2024-01-01' })] },
        {},
      ),
    ).toThrow(ConfigError);
  });
});
