/**
 * The /status page in headless Chromium (Debian's, driven by playwright-core), for the tests that
 * read it as a browser renders it. Where Chromium is missing the tests skip, but not in CI.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

const CHROMIUM = '/usr/bin/chromium';

/** Whether the browser tests run here: `describe.skipIf(!WITH_CHROMIUM)`. */
export const WITH_CHROMIUM = existsSync(CHROMIUM) || Boolean(process.env.CI);

export interface PageOptions {
  headers?: Record<string, string>;
  viewport?: { width: number; height: number };
  /** Runs before the page loads, to watch it from the start (its dialogs, its requests). */
  watch?: (page: Page) => void;
}

export interface StatusBrowser {
  /** A new page with `url` loaded (waitUntil load); the test closes it. */
  open(url: string, options?: PageOptions): Promise<Page>;
  /** A new blank page (e.g. for setContent); the test closes it. */
  newPage(options?: Pick<PageOptions, 'viewport'>): Promise<Page>;
}

/** Launches Chromium before the tests of the enclosing describe block and closes it after. */
export function statusBrowser(): StatusBrowser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  const newPage = async (options: Pick<PageOptions, 'viewport'> = {}) => {
    if (!browser) throw new Error('statusBrowser: used outside its tests');
    return browser.newPage(options.viewport ? { viewport: options.viewport } : {});
  };
  return {
    newPage,
    async open(url, options = {}) {
      const page = await newPage(options);
      if (options.headers) await page.setExtraHTTPHeaders(options.headers);
      options.watch?.(page);
      await page.goto(url, { waitUntil: 'load' });
      return page;
    },
  };
}
