import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { useTestApp, type TestApp } from '../helpers/harness';

/** The reference page in a real headless browser: the Chromium @sparticuz/chromium ships, or CHROMIUM_PATH. */

let app: TestApp;
useTestApp((a) => (app = a), {}, { workers: false });

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

it('renders /api/reference from node_modules and the generated document, and shows the trade route', async () => {
  const addr = app.server.address() as { port: number };
  const base = `http://127.0.0.1:${addr.port}`;
  const page = await browser.newPage();
  const offsite: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) offsite.push(r.url());
  });
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${base}/api/reference`);
  // The page opens with every tag collapsed (over ~120 operations expanded at once stall the page):
  // open the predictions tag, then the trade route is listed.
  const predictions = page.locator('.opblock-tag[data-tag="predictions"]');
  await predictions.waitFor({ state: 'visible' });
  await predictions.click();
  const trade = page.locator('.opblock-post', { has: page.locator('[data-path="/predictions/trade"]') });
  await trade.first().waitFor({ state: 'visible' });
  expect(await trade.first().locator('.opblock-summary-method').innerText()).toBe('POST');
  expect(await page.locator('.info .title').innerText()).toContain('Metric-priced proposals API');
  expect(offsite).toEqual([]);
  expect(pageErrors).toEqual([]);
  await page.close();
});
