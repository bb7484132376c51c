/**
 * /status.json and /status for upstreams of each era, real processes over loopback: a 2025
 * server (examples/echo-http) with `protocolVersion: auto`, whose HTTP 400 to server/discover
 * is the expected fall-back to initialize and no failure; a 2026-07-28-only one
 * (examples/modern), which has no workers; a dual-era one; a closed port and a command that
 * exits, whose failures carry their time; and a per-session upstream whose tools depend on the
 * client's capabilities, whose catalog is shown as each session lists it (SDK v1 clients), not
 * as the gateway's probe (which offers every capability) lists it. The page is read in headless
 * Chromium (Debian's, driven by playwright-core).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilityToolsUpstream } from '../support/capability-tools.js';
import { startDualEraUpstream, type DualEraUpstream } from '../support/dual-era-upstream.js';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import {
  httpUpstream,
  startEchoHttp,
  startStatelessFixture,
  type HttpServerProcess,
} from '../support/http-upstream.js';
import { statusBrowser, WITH_CHROMIUM } from '../support/status-browser.js';
import { closedPort, statusWhen, type UpstreamRow } from './support.js';

let gw: RunningGateway;
let echo: HttpServerProcess;
let modern: HttpServerProcess;
let dual: DualEraUpstream;
let startedAt: string;
const clients: Client[] = [];

beforeAll(async () => {
  [echo, modern, dual] = await Promise.all([
    startEchoHttp(),
    startStatelessFixture(),
    startDualEraUpstream({ dual: true }),
  ]);
  const port = await closedPort();
  startedAt = new Date().toISOString();
  gw = await startGateway(
    exampleConfig({
      upstreams: [
        httpUpstream('old', echo.url, { protocolVersion: 'auto' }),
        httpUpstream('new', modern.url),
        httpUpstream('dual', dual.url),
        httpUpstream('gone', `http://127.0.0.1:${port}/mcp`, {
          retry: { attempts: 0 },
          health: { intervalMs: 200, timeoutMs: 500 },
        }),
        { name: 'broken', transport: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] },
        capabilityToolsUpstream('caps'),
      ],
      servers: [
        {
          path: '/mcp/team',
          tools: ['caps__*'],
          prompts: [],
          resources: [],
          overrides: { caps__needs_sampling: { name: 'sample-it' } },
        },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gw?.stop();
  await Promise.all([echo?.stop(), modern?.stop(), dual?.close()]);
});

async function connect(capabilities: Record<string, Record<string, never>>, url: URL = gw.url): Promise<Client> {
  const client = new Client({ name: 'status-eras', version: '1' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return client;
}

const settled = (rows: UpstreamRow[]) => {
  const by = Object.fromEntries(rows.map((r) => [r.name, r.state]));
  return ['old', 'new', 'dual', 'caps'].every((n) => by[n] === 'ready') && by.gone === 'down' && by.broken === 'down';
};

type Row = Record<string, any>;
type Entries = {
  tools: { count: number; names: string[] };
  listedBy: string;
  sessions?: Array<{ sessions: number; tools: { names: string[] } }>;
};

async function report(): Promise<{
  upstreams: Record<string, Row>;
  servers: Array<{ name: string; byUpstream: Record<string, Entries> }>;
}> {
  const r = await statusWhen(gw.base, settled);
  return { upstreams: Object.fromEntries((r.upstreams as Row[]).map((u) => [u.name, u])), servers: r.servers as never };
}

describe('/status.json by era', () => {
  it('a 2025 server behind `auto`: its 400 to server/discover is the expected fall-back, no failure', async () => {
    const { upstreams } = await report();
    expect(upstreams.old).toMatchObject({ state: 'ready', era: 'session', circuit: 'closed', consecutiveFailures: 0 });
    expect(upstreams.old!.lastFailure).toBeUndefined();
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as { upstreams: Record<string, Row> };
    expect(ready.upstreams.old!.lastFailure).toBeUndefined();
    // It is spoken to in 2025 all the same.
    const client = await connect({});
    expect(toolText(await client.callTool({ name: 'old__echo', arguments: { text: 'still here' } }))).toContain(
      'still here',
    );
  });

  it('a 2026-07-28 upstream has no worker count; a dual one counts its 2025 sessions; each names its era', async () => {
    const { upstreams } = await report();
    // (Its in-flight count may hold a health check's server/discover.)
    expect(upstreams.new).toMatchObject({
      state: 'ready',
      era: 'modern',
      protocolVersion: '2026-07-28',
      inFlight: expect.any(Number),
    });
    expect(upstreams.new!.workers).toBeUndefined();
    expect(upstreams.new!.ready).toBeUndefined();
    expect(upstreams.dual).toMatchObject({
      state: 'ready',
      era: 'dual',
      protocolVersion: '2026-07-28',
      workers: expect.any(Number),
    });
    expect(upstreams.caps).toMatchObject({ era: 'session', protocolVersion: expect.stringMatching(/^2025-/) });
    const ready = (await (await fetch(`${gw.base}/readyz`)).json()) as { upstreams: Record<string, Row> };
    expect(ready.upstreams.dual).toMatchObject({ era: 'dual' });
    expect(ready.upstreams.new).toMatchObject({ era: 'modern', workers: 0, ready: 0 });
  });

  it('a real failure carries its time', async () => {
    const { upstreams } = await report();
    const now = new Date().toISOString();
    for (const name of ['gone', 'broken']) {
      const u = upstreams[name]!;
      expect(u.lastFailure, name).toEqual(expect.any(String));
      expect(u.lastFailureAt, name).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(u.lastFailureAt >= startedAt && u.lastFailureAt <= now, `${name} at ${u.lastFailureAt}`).toBe(true);
    }
    expect(upstreams.gone!.lastFailure).toContain('ECONNREFUSED');
  });

  it('the catalog as clients list it: a per-session upstream by what each session got, not the probe', async () => {
    const plain = await connect({});
    const sampler = await connect({ sampling: {} });
    const plainTools = (await plain.listTools()).tools.map((t) => t.name);
    const samplerTools = (await sampler.listTools()).tools.map((t) => t.name);
    expect(plainTools.filter((n) => n.startsWith('caps__'))).toEqual(['caps__always']);
    const { servers } = await report();
    const main = servers.find((s) => s.name === 'main')!;
    expect(main.byUpstream.old!.listedBy).toBe('shared');
    expect(main.byUpstream.caps!.listedBy).toBe('per-session');
    // The probe's list (what 2026-07-28 requests get) is labelled as such; each session's is its own.
    expect(main.byUpstream.caps!.tools.names).toEqual(['caps__always', 'caps__needs_sampling']);
    const lists = Object.fromEntries(main.byUpstream.caps!.sessions!.map((l) => [l.tools.names.join(','), l.sessions]));
    // Two distinct lists: the sampler's alone has needs_sampling (the first test's client, which called a tool, has the plain one too).
    expect(Object.keys(lists).sort()).toEqual(['caps__always', 'caps__always,caps__needs_sampling']);
    expect(lists['caps__always,caps__needs_sampling']).toBe(1);
    expect(lists.caps__always).toBeGreaterThanOrEqual(1);
    // Every name a client lists is in the report: the shared upstreams' and that session's own list.
    const shared = Object.values(main.byUpstream)
      .filter((e) => e.listedBy === 'shared')
      .flatMap((e) => e.tools.names);
    expect(new Set(plainTools)).toEqual(new Set([...shared, 'caps__always']));
    expect(new Set(samplerTools)).toEqual(new Set([...shared, 'caps__always', 'caps__needs_sampling']));
    // Through a virtual server's selection and rename.
    const team = servers.find((s) => s.name === '/mcp/team')!;
    expect(team.byUpstream.caps!.sessions!.map((l) => l.tools.names.join(',')).sort()).toEqual([
      'caps__always',
      'caps__always,sample-it',
    ]);
    const teamClient = await connect({ sampling: {} }, new URL('/mcp/team', gw.base));
    expect((await teamClient.listTools()).tools.map((t) => t.name).sort()).toEqual(['caps__always', 'sample-it']);
  });
});

describe.skipIf(!WITH_CHROMIUM)('/status by era in headless Chromium', () => {
  const browser = statusBrowser();

  it('shows each era, no "1/0", no failure for the fall-back, a failure with its time, the sessions\' lists', async () => {
    await report();
    // A session of its own that has listed (the tests above may not have run).
    await (await connect({ sampling: {} })).listTools();
    const page = await browser.open(`${gw.base}/status`, { viewport: { width: 1280, height: 900 } });
    const headers = await page.$$eval('table:first-of-type thead th', (ths) => ths.map((th) => th.textContent ?? ''));
    expect(headers).toContain('era');
    const rows = await page.$$eval('tr[data-upstream]', (trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim());
        const failure = tr.querySelector('td:last-child');
        return {
          name: tr.querySelector('th')?.textContent ?? '',
          era: cells[1] ?? '',
          workers: cells[3] ?? '',
          failure: cells.at(-1) ?? '',
          failureClass: failure?.className ?? '',
          at: tr.querySelector('time')?.getAttribute('datetime') ?? '',
        };
      }),
    );
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(by.old).toMatchObject({ era: expect.stringContaining('2025 session'), failure: 'none' });
    expect(by.new!.era).toContain('2026-07-28');
    expect(by.new!.workers).toBe('none (stateless)');
    expect(rows.map((r) => r.workers)).not.toContain('1/0');
    expect(by.dual!.era).toContain('dual');
    expect(by.gone!.era).toBe('not known yet');
    expect(by.gone).toMatchObject({ failureClass: 'failure', failure: expect.stringContaining('ECONNREFUSED') });
    expect(by.gone!.failure).toContain(`at ${by.gone!.at}`);
    expect(Number.isNaN(Date.parse(by.gone!.at))).toBe(false);
    const caps = await page.$$eval('section[data-server="main"] tr[data-catalog-upstream="caps"]', (trs) =>
      trs.map((tr) => ({
        by: tr.getAttribute('data-listed-by'),
        sessions: tr.getAttribute('data-sessions'),
        text: tr.textContent ?? '',
      })),
    );
    expect(caps[0]!.by).toBe('probe');
    expect(caps.length).toBeGreaterThanOrEqual(2);
    expect(caps.slice(1).every((r) => r.by === 'sessions')).toBe(true);
    expect(caps.filter((r) => r.by === 'sessions').every((r) => Number(r.sessions) >= 1)).toBe(true);
    expect(caps.some((r) => r.text.includes('caps__needs_sampling') && r.by === 'sessions')).toBe(true);
    expect(caps[0]!.text).toContain("2026-07-28 requests (the gateway's probe");
    if (process.env.STATUS_SCREENSHOT) await page.screenshot({ path: process.env.STATUS_SCREENSHOT, fullPage: true });
    await page.close();
  });
});
