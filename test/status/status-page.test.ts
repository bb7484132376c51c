/**
 * /status and /status.json against a real gateway: a working stdio upstream, a stdio upstream
 * whose command exits at once, and an HTTP upstream on a closed port. The HTML page is loaded
 * in headless Chromium (Debian's, driven by playwright-core): the rendered DOM names each
 * upstream with its state, and a screenshot is written to the test's temp dir.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  openSession,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { httpUpstream } from '../support/http-upstream.js';
import { rawStdioServer } from '../support/raw-stdio-server.js';
import { statusBrowser, WITH_CHROMIUM } from '../support/status-browser.js';
import { closedPort, statusWhen, type UpstreamRow } from './support.js';

const SECRETS = ['query-token', 'header-token', 'env-secret', 'arg-secret'];
// A tool whose name is markup: the page must show it as text.
const EVIL_TOOL = '<img src=x onerror=alert(1)>';

let gw: RunningGateway;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpgw-status-'));
  const port = await closedPort();
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        stdioUpstream('echo', ECHO_SERVER, {
          env: { API_KEY: 'env-secret' },
          args: [ECHO_SERVER, '--token=arg-secret'],
        }),
        { name: 'broken', transport: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] },
        httpUpstream('remote', `http://127.0.0.1:${port}/mcp?key=query-token`, {
          headers: { authorization: 'Bearer header-token' },
          retry: { attempts: 0 },
          health: { intervalMs: 200, timeoutMs: 500 },
        }),
        {
          name: 'odd',
          transport: 'stdio',
          command: process.execPath,
          args: [
            '-e',
            rawStdioServer(
              `return m.method === 'initialize' ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1' } } : m.method === 'tools/list' ? { tools: [{ name: ${JSON.stringify(EVIL_TOOL)}, inputSchema: { type: 'object' } }] } : {};`,
            ),
          ],
        },
      ],
    }),
  );
});

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const settled = (rows: UpstreamRow[]) => {
  const by = Object.fromEntries(rows.map((r) => [r.name, r.state]));
  return by.echo === 'ready' && by.odd === 'ready' && by.broken === 'down' && by.remote === 'down';
};

describe('/status.json', () => {
  it('reports each upstream, the clients, the config and the catalog per upstream', async () => {
    await openSession(gw.url);
    const report = await statusWhen(gw.base, settled);
    const upstreams = report.upstreams as Array<Record<string, unknown>>;
    const echo = upstreams.find((u) => u.name === 'echo')!;
    expect(echo).toMatchObject({
      transport: 'stdio',
      mode: 'shared',
      target: expect.any(String),
      state: 'ready',
      inFlight: 0,
      queued: 0,
    });
    expect(echo.ready as number).toBeGreaterThanOrEqual(1);
    const broken = upstreams.find((u) => u.name === 'broken')!;
    expect(broken.state).toBe('down');
    expect(broken.lastFailure).toEqual(expect.any(String));
    const remote = upstreams.find((u) => u.name === 'remote')!;
    expect(remote).toMatchObject({
      state: 'down',
      transport: 'http',
      target: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    expect(['open', 'half-open']).toContain(remote.circuit);

    expect(report.gateway).toMatchObject({
      state: 'ready',
      version: expect.any(String),
      uptimeSeconds: expect.any(Number),
    });
    expect(report.sessions).toMatchObject({ store: 'memory', count: 1 });
    expect(report.streams).toEqual({ get: 0, listen: 0, replies: 0 });
    expect(report.inputChains).toBe(0);
    expect(report.config).toMatchObject({ file: null, reload: { enabled: true, count: 0 } });

    const [main] = report.servers as Array<{
      name: string;
      path: string;
      byUpstream: Record<string, { tools: { count: number; names: string[] } }>;
    }>;
    expect(main).toMatchObject({ name: 'main', path: '/mcp' });
    expect(main!.byUpstream.echo!.tools.names).toContain('echo__echo');
    expect(main!.byUpstream.odd!.tools.names).toEqual([`odd__${EVIL_TOOL}`]);
    expect(main!.byUpstream.broken!.tools.count).toBe(0);
  });

  it('shows no secret: no URL query, no header, env or argument values', async () => {
    await statusWhen(gw.base, settled);
    for (const path of ['/status.json', '/status']) {
      const body = await (await fetch(`${gw.base}${path}`)).text();
      for (const secret of SECRETS) expect(body, `${path} shows ${secret}`).not.toContain(secret);
    }
  });

  it('shows a reload once the wiring reports one', async () => {
    gw.gateway.configStatus.recordReload('rejected', 'upstreams[0].command: <required>');
    const report = await statusWhen(gw.base, () => true);
    expect(report.config).toMatchObject({
      reload: { enabled: true, count: 1, lastOutcome: 'rejected', lastError: 'upstreams[0].command: <required>' },
    });
    const html = await (await fetch(`${gw.base}/status`)).text();
    expect(html).toContain('upstreams[0].command: &lt;required&gt;');
  });
});

describe('/status', () => {
  it('is a self-contained HTML page that refreshes itself and allows no script', async () => {
    const res = await fetch(`${gw.base}/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toMatch(/<meta http-equiv="refresh" content="5">/);
    expect(html).not.toMatch(/<script|src="http|href="http|@import/i);
    expect(html).not.toContain(EVIL_TOOL);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe.skipIf(!WITH_CHROMIUM)('/status in headless Chromium', () => {
  const browser = statusBrowser();

  it('renders each upstream with its state, the down ones as down, and a screenshot', async () => {
    await statusWhen(gw.base, settled);
    const dialogs: string[] = [];
    const external: string[] = [];
    const page = await browser.open(`${gw.base}/status`, {
      viewport: { width: 1280, height: 900 },
      watch: (p) => {
        p.on('dialog', (d) => {
          dialogs.push(d.message());
          void d.dismiss();
        });
        p.on('request', (r) => {
          if (!r.url().startsWith(gw.base)) external.push(r.url());
        });
      },
    });
    // Runs in the page (the test's tsconfig has no DOM library, hence the cast).
    const rows = await page.$$eval('tr[data-upstream]', (trs) => {
      const style = (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } })
        .getComputedStyle;
      return trs.map((tr) => ({
        name: tr.querySelector('th')?.textContent ?? '',
        state: tr.querySelector('.badge')?.textContent ?? '',
        colour: style(tr.querySelector('.badge')).backgroundColor,
      }));
    });
    expect(rows.map((r) => [r.name, r.state])).toEqual([
      ['echo', 'ready'],
      ['broken', 'down'],
      ['remote', 'down'],
      ['odd', 'ready'],
    ]);
    // Down is drawn in another colour than ready.
    expect(rows[1]!.colour).not.toBe(rows[0]!.colour);
    const text = await page.textContent('body');
    expect(text).toContain(`odd__${EVIL_TOOL}`);
    expect(await page.$$('img')).toHaveLength(0);
    expect(dialogs).toEqual([]);
    expect(external).toEqual([]);
    const shot = join(dir, 'status.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(readFileSync(shot).subarray(1, 4).toString()).toBe('PNG');
    if (process.env.STATUS_SCREENSHOT) await page.screenshot({ path: process.env.STATUS_SCREENSHOT, fullPage: true });
    await page.close();
  });
});
