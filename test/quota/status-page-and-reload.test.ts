/**
 * One gateway without Redis (each replica counts in memory): /status shows a "Top consumers"
 * table per quota, in headless Chromium (Debian's, driven by playwright-core), a principal's
 * name shown as text whatever it holds; a reload changes the quotas from the next call on, a
 * quota kept by name keeps its count, a renamed one starts fresh, none left counts nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/server/status/report.js';
import { renderStatusPage } from '../../src/server/status/view.js';
import { ECHO_SERVER, stdioUpstream } from '../support/gateway.js';
import { admitted, apiKeyAuth, bearer, callsRoundRobin, keyOf, openAs } from '../support/rate-limits.js';
import { startFromFile } from '../support/reload.js';
import { statusBrowser, WITH_CHROMIUM } from '../support/status-browser.js';

const EVIL = '<img src=x onerror="window.__xss=1">';
const base = {
  upstreams: [stdioUpstream('echo', ECHO_SERVER)],
  auth: apiKeyAuth(['alice', 'bob']),
  status: { principals: ['alice'] },
};
const daily = { name: 'daily', window: 'day', calls: 3 };
const cleanups: Array<() => Promise<void>> = [];
let gw: Awaited<ReturnType<typeof startFromFile>>;

beforeAll(async () => {
  gw = await startFromFile({ ...base, quotas: { rules: [daily] } }, cleanups);
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const calls = async (principal: string, n: number) =>
  callsRoundRobin([gw.url], await openAs(gw.url, principal), n, principal);

async function report(): Promise<StatusReport> {
  const res = await fetch(`${gw.base}/status.json`, { headers: bearer(keyOf('alice')) });
  return (await res.json()) as StatusReport;
}

describe('quotas in memory', () => {
  it('admits 3 calls a day per principal, then refuses with QUOTA_EXCEEDED', async () => {
    const alice = await calls('alice', 4);
    expect(admitted(alice)).toBe(3);
    expect(alice[3]!.status).toBe(429);
    expect(alice[3]!.error!.data).toMatchObject({ type: 'QUOTA_EXCEEDED', quota: 'daily' });
    expect(admitted(await calls('bob', 1))).toBe(1);
    expect((await report()).quotas[0]!.measures[0]!.top).toEqual([
      { principal: 'alice', used: 3 },
      { principal: 'bob', used: 1 },
    ]);
  });
});

describe.skipIf(!WITH_CHROMIUM)('/status top consumers in headless Chromium', () => {
  const browser = statusBrowser();

  it('shows a Top consumers table per quota: principal, measure, used / limit', async () => {
    const page = await browser.open(`${gw.base}/status`, { headers: bearer(keyOf('alice')) });
    const section = page.locator('section[data-quota="daily"]');
    expect(await section.locator('caption').textContent()).toBe('Top consumers');
    expect(await section.locator('h3').textContent()).toContain('per day (UTC), resets');
    const rows = await section
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th,td')].map((c) => (c.textContent ?? '').trim())),
      );
    expect(rows).toEqual([
      ['alice', 'calls', '3 / 3'],
      ['bob', 'calls', '1 / 3'],
    ]);
    await page.close();
  });

  it("shows a principal's name as text: markup in it runs nothing", async () => {
    const r = await report();
    r.quotas[0]!.measures[0]!.top[0]!.principal = EVIL;
    const page = await browser.newPage();
    await page.setContent(renderStatusPage(r, 0), { waitUntil: 'load' });
    const section = page.locator('section[data-quota="daily"]');
    expect(await section.locator('img').count()).toBe(0);
    expect(await section.locator('tbody th').first().textContent()).toBe(EVIL);
    expect(await section.locator('tbody tr').first().getAttribute('data-quota-principal')).toBe(EVIL);
    expect(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss)).toBeUndefined();
    await page.close();
  });
});

describe('quotas and reload', () => {
  it('a quota kept by name keeps its count: a raised limit admits the difference', async () => {
    gw.file.write({ ...base, quotas: { rules: [{ ...daily, calls: 5 }] } });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    const alice = await calls('alice', 3);
    expect(admitted(alice)).toBe(2);
    expect(alice[2]!.error!.data).toMatchObject({ type: 'QUOTA_EXCEEDED', limit: 5 });
  });

  it('a renamed quota starts fresh; none left counts nothing and /status.json lists none', async () => {
    gw.file.write({ ...base, quotas: { rules: [{ ...daily, name: 'daily-2', calls: 1 }] } });
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    expect(admitted(await calls('alice', 2))).toBe(1);
    gw.file.write(base);
    expect((await gw.gateway.reload()).outcome).toBe('ok');
    expect(admitted(await calls('alice', 4))).toBe(4);
    expect((await report()).quotas).toEqual([]);
  });

  it('a reload with a bad quota is rejected and changes nothing', async () => {
    gw.file.write({ ...base, quotas: { rules: [{ ...daily, calls: 0 }] } });
    expect((await gw.gateway.reload()).outcome).toBe('rejected');
    expect(admitted(await calls('alice', 2))).toBe(2);
  });
});
