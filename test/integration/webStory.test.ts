import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { mint } from '../helpers/factories';
import { expectLedgerSound, uniqueName, useTestApp, type TestApp } from '../helpers/harness';
import { standingsAdded } from '../helpers/markets';

/**
 * Issue 59's story, as two people live it in Chromium (script on, as a person's browser): Ada and Ben
 * sign up on the pages; Ada creates a public workspace and a metric, its cost shown before she
 * confirms; Ben finds the workspace on the home page, joins it, proposes (the subsidy shown first)
 * and comments; Ada replies; both trade on both branches' books with a quote first; Ada approves,
 * then settles the metric early from its page; the settlement shows on both profiles, with the
 * figures the API gives. Each step writes a screenshot to test-results/web-story/ (ignored by git).
 * The ledger holds at the end.
 */
let app: TestApp;
useTestApp((a) => (app = a));

const OUT = join(__dirname, '..', '..', 'test-results', 'web-story');
let base: string;
let browser: Browser;
let step = 0;

async function shot(page: Page, name: string): Promise<void> {
  step += 1;
  await page.screenshot({ path: join(OUT, `${String(step).padStart(2, '0')}-${name}.png`), fullPage: true });
}

interface Person {
  name: string;
  email: string;
  password: string;
  context: BrowserContext;
  page: Page;
  id: string;
}

/** A person signs up and signs in on the pages, as anyone would: the header then names them. */
async function arrive(name: string): Promise<Person> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
  (page as Page & { errors?: string[] }).errors = errors;
  const email = `${name.toLowerCase()}-${uniqueName('s')}@example.com`;
  const password = `pw-${uniqueName('secret')}`;
  await page.goto(`${base}/sign-up`);
  await page.locator('#sign-up-name').fill(name);
  await page.locator('#sign-up-email').fill(email);
  await page.locator('#sign-up-password').fill(password);
  await Promise.all([page.waitForURL(/\/sign-in/), page.getByRole('button', { name: 'Sign up' }).click()]);
  // The sign-in page has the address just signed up with filled in (and not in its address).
  expect(await page.locator('#sign-in-email').inputValue()).toBe(email);
  expect(page.url()).not.toContain(encodeURIComponent(email));
  await page.locator('#sign-in-password').fill(password);
  await Promise.all([page.waitForURL(`${base}/`), page.getByRole('button', { name: 'Sign in' }).click()]);
  await hasText(page.locator('header'), name);
  const me = await context.request.get(`${base}/api/agents/me`);
  expect(me.status()).toBe(200);
  return { name, email, password, context, page, id: ((await me.json()) as { id: string }).id };
}

/** On a book's page: a quote for `credits` on `direction`, then Confirm; returns the API's trade as seen after. */
async function trade(p: Person, marketPath: string, direction: 'higher' | 'lower', credits: number, shotName: string): Promise<void> {
  const page = p.page;
  await page.goto(`${base}${marketPath}`);
  await page.locator(`#trade-form input[name="direction"][value="${direction}"]`).check();
  await page.locator('#trade-amount').fill(String(credits));
  await Promise.all([page.waitForLoadState('load'), page.locator('#trade-quote-button').click()]);
  const quote = page.locator('#trade-quote');
  await hasCount(quote.locator('[data-field="cost"]'), 1);
  expect(Number(await quote.locator('[data-field="cost"]').getAttribute('data-value'))).toBeCloseTo(credits, 6);
  expect(Number(await quote.locator('[data-field="shares"]').getAttribute('data-value'))).toBeGreaterThan(0);
  await shot(page, `${shotName}-quote`);
  await Promise.all([page.waitForURL(/done=trade/), page.locator('#trade-confirm').click()]);
  await hasCount(page.locator('[data-done="trade"]'), 1);
}

/** Waits (up to 5 s) for a locator's text to contain `text`, then asserts it. */
async function hasText(locator: Locator, text: string | RegExp): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const t = await locator.innerText().catch(() => '');
    if (typeof text === 'string' ? t.includes(text) : text.test(t)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(await locator.innerText()).toMatch(text);
}

/** Waits (up to 5 s) for a locator to match `n` elements, then asserts it. */
async function hasCount(locator: Locator, n: number): Promise<void> {
  for (let i = 0; i < 50 && (await locator.count()) !== n; i++) await new Promise((r) => setTimeout(r, 100));
  expect(await locator.count()).toBe(n);
}

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  browser = await launchChromium();
}, 60_000);
afterAll(() => browser?.close());

it('two people: sign up, create and fund a metric, propose and discuss, trade both branches, approve, settle, and see it on both profiles', async () => {
  const ada = await arrive('Ada');
  await shot(ada.page, 'ada-signed-in');
  // Credits come from the operator (a deposit or a grant): new accounts start at zero.
  await mint(app, ada.id, 5_000);

  // Ada creates a public workspace from her home's New workspace link, then its metric: the cost shown before she confirms.
  await Promise.all([ada.page.waitForURL(`${base}/workspaces/new`), ada.page.locator('#new-workspace').click()]);
  const slug = `story-${uniqueName('ws').toLowerCase().replace(/[^a-z0-9-]/g, '')}`.slice(0, 40);
  await ada.page.locator('#workspace-name').fill('Story workspace');
  await ada.page.locator('#workspace-slug').fill(slug);
  await ada.page.locator('#workspace-description').fill('Where Ada and Ben try the pages.');
  await ada.page.locator('#workspace-form input[name="public"]').check();
  await shot(ada.page, 'ada-new-workspace');
  await Promise.all([ada.page.waitForURL(new RegExp(`/w/${slug}/metrics/new`)), ada.page.getByRole('button', { name: 'Create the workspace' }).click()]);
  await ada.page.locator('#metric-name').fill('Weekly signups');
  await ada.page.locator('#metric-value').fill('120');
  await Promise.all([ada.page.waitForLoadState('load'), ada.page.locator('#metric-review').click()]);
  const cost = Number(await ada.page.locator('#cost').getAttribute('data-value'));
  const dryRun = await ada.context.request.post(`${base}/api/metrics`, { headers: { 'X-Workspace-Id': slug }, data: { name: 'Weekly signups', value: 120, dryRun: true } });
  expect(cost).toBe(((await dryRun.json()) as { subsidyNeeded: number }).subsidyNeeded);
  expect(cost).toBeGreaterThan(0);
  await shot(ada.page, 'ada-metric-cost-first');
  const adaBefore = ((await (await ada.context.request.get(`${base}/api/agents/me/balance`)).json()) as { balance: number }).balance;
  await Promise.all([ada.page.waitForURL(/\/metrics\/[0-9a-f-]{36}\?done=metric$/), ada.page.locator('#metric-confirm').click()]);
  const metricId = /\/metrics\/([0-9a-f-]{36})/.exec(ada.page.url())![1];
  const adaAfter = ((await (await ada.context.request.get(`${base}/api/agents/me/balance`)).json()) as { balance: number }).balance;
  expect(adaAfter).toBeCloseTo(adaBefore - cost, 6);
  await shot(ada.page, 'ada-metric-created');

  // Ada's home lists her public workspace among hers, and does not say there is none.
  await ada.page.goto(`${base}/`);
  await hasCount(ada.page.locator(`#yours [data-workspace="${slug}"]`), 1);
  expect(await ada.page.locator('#public').innerText()).not.toContain('No public workspace yet');

  // Ben arrives: his first page offers the sign-up grant, which he takes; then he finds the new
  // workspace on the home page (no search) and joins it from its page.
  const ben = await arrive('Ben');
  const grant = Number(await ben.page.locator('#grant [data-field="grant"]').getAttribute('data-value'));
  expect(grant).toBe(app.deps.config.SIGNUP_CREDITS);
  await shot(ben.page, 'ben-offered-the-grant');
  await Promise.all([ben.page.waitForURL(/done=grant/), ben.page.locator('#grant-button').click()]);
  await hasCount(ben.page.locator('[data-done="grant"]'), 1);
  expect(Number(await ben.page.locator('header [data-field="me-balance"]').getAttribute('data-value'))).toBe(grant);
  await hasCount(ben.page.locator('#grant-button'), 0);
  // Paid once: the credits page says so, and the API refuses a second grant.
  await Promise.all([ben.page.waitForURL(`${base}/credits`), ben.page.locator('header summary').click().then(() => ben.page.getByRole('link', { name: 'Get credits' }).first().click())]);
  await hasText(ben.page.locator('[data-field="grant-state"]'), 'paid once per person');
  await hasText(ben.page.locator('#ask-link'), `/transfer?to=`);
  expect((await ben.context.request.post(`${base}/api/agents/signup-grant`)).status()).toBe(409);
  await shot(ben.page, 'ben-credits-page');
  await Promise.all([ben.page.waitForURL(`${base}/`), ben.page.locator('a.brand').click()]);
  await Promise.all([ben.page.waitForURL(new RegExp(`/w/${slug}$`)), ben.page.locator(`#public a[href="/w/${slug}"]`).click()]);
  await shot(ben.page, 'ben-finds-workspace');
  await Promise.all([ben.page.waitForURL(/done=join/), ben.page.locator('#join-button').click()]);
  await hasCount(ben.page.locator('[data-done="join"]'), 1);
  await hasCount(ben.page.locator('#join-button'), 0);

  // Ben proposes: the subsidy shown first, then Confirm; then he comments.
  await ben.page.goto(`${base}/w/${slug}/proposals/new`);
  await ben.page.locator('#proposal-title').fill('Free trial for a month');
  await ben.page.locator('#proposal-description').fill('Let new teams try every feature for thirty days.');
  await ben.page.locator(`input[name="metricIds"][value="${metricId}"]`).check();
  await ben.page.locator('#proposal-liquidity').fill('20');
  await Promise.all([ben.page.waitForLoadState('load'), ben.page.locator('#proposal-review').click()]);
  const subsidy = Number(await ben.page.locator('#cost').getAttribute('data-value'));
  expect(subsidy).toBeGreaterThan(0);
  await shot(ben.page, 'ben-proposal-subsidy-first');
  await Promise.all([ben.page.waitForURL(/\/proposals\/[0-9a-f-]{36}\?done=proposal$/), ben.page.locator('#proposal-confirm').click()]);
  const proposalPath = new URL(ben.page.url()).pathname;
  await ben.page.locator('#comment-body').fill('Trials convert well in our other products.');
  await Promise.all([ben.page.waitForURL(/done=comment/), ben.page.getByRole('button', { name: 'Post the comment' }).click()]);
  await shot(ben.page, 'ben-proposed-and-commented');

  // Ada reads it and replies under Ben's comment.
  await ada.page.goto(`${base}${proposalPath}`);
  await hasText(ada.page.locator('ol.comments').first(), 'Trials convert well');
  const thread = ada.page.locator('ol.comments li[data-comment]').first();
  await thread.locator('summary', { hasText: 'Reply' }).first().click();
  await thread.locator('textarea[id^="reply-"]').first().fill('Show me the books first.');
  await Promise.all([ada.page.waitForURL(/done=/), thread.getByRole('button', { name: 'Post the reply' }).first().click()]);
  await hasText(ada.page.locator('ol.comments').first(), 'Show me the books first.');
  await shot(ada.page, 'ada-replied');

  // Both trade on both branches, from the proposal's branch-book links.
  const approvedBook = await ada.page.locator('td[data-branch-book="approved"] a').first().getAttribute('href');
  const declinedBook = await ada.page.locator('td[data-branch-book="declined"] a').first().getAttribute('href');
  expect(approvedBook).toMatch(/\/markets\//);
  expect(declinedBook).toMatch(/\/markets\//);
  await trade(ada, approvedBook!, 'higher', 30, 'ada-approved-branch');
  // The branch book links back to its proposal.
  await hasCount(ada.page.locator(`a[href="${proposalPath}"]`).first(), 1);
  await trade(ada, declinedBook!, 'lower', 10, 'ada-declined-branch');
  await trade(ben, approvedBook!, 'lower', 15, 'ben-approved-branch');
  // His position is valued at what selling it now returns (the API's own sell quote), which on a
  // book this thin is less than the 15 cr it cost, not more.
  const sellNow = Number(await ben.page.locator('#position [data-field="sell-now-for"]').getAttribute('data-value'));
  const held = Number(await ben.page.locator('#position [data-field="shares"]').getAttribute('data-value'));
  const sellQuote = (await (await ben.context.request.post(`${base}/api/predictions/trade`, { headers: { 'X-Workspace-Id': slug }, data: { marketId: /markets\/([0-9a-f-]{36})/.exec(approvedBook!)![1], direction: 'lower', sellShares: held, dryRun: true } })).json()) as { proceeds: number };
  expect(sellNow).toBeCloseTo(sellQuote.proceeds, 6);
  expect(sellNow).toBeLessThanOrEqual(15);
  await hasText(ben.page.locator('#position-valued'), 'what selling every share now would return');
  // Back after the trade: the quote's page again (a GET, re-quoted), never a prompt to resend a form.
  const back = await ben.page.goBack();
  expect(back?.request().method()).toBe('GET');
  expect(back?.status()).toBe(200);
  await hasCount(ben.page.locator('#trade-quote [data-field="cost"]'), 1);
  await shot(ben.page, 'ben-back-after-trade');
  await trade(ben, declinedBook!, 'higher', 12, 'ben-declined-branch');
  const approvedId = /markets\/([0-9a-f-]{36})/.exec(approvedBook!)![1];
  // The approved branch's book holds both their trades (its history: one point per trade).
  const history = (await (await ada.context.request.get(`${base}/api/predictions/markets/${approvedId}/history`, { headers: { 'X-Workspace-Id': slug } })).json()) as { points: unknown[] };
  expect(history.points).toHaveLength(2);

  // Ada approves: the declined branch is voided (refunded), the approved one trades on.
  await ada.page.goto(`${base}${proposalPath}`);
  await Promise.all([ada.page.waitForURL(/done=/), ada.page.locator('#approve-button').click()]);
  await hasText(ada.page.locator('main'), 'approved');
  await shot(ada.page, 'ada-approved');

  // Ada settles the metric early from its page: every book of it resolves, the approved branch's too.
  await ada.page.goto(`${base}/w/${slug}/metrics/${metricId}`);
  await ada.page.locator('#settle-value').fill('150');
  await ada.page.locator('#settle-reason').fill('the trial month ended');
  await ada.page.locator('#settle-confirm').check();
  await shot(ada.page, 'ada-settles-early');
  await Promise.all([ada.page.waitForURL(/done=/), ada.page.locator('#settle-button').click()]);
  await standingsAdded(app);
  await ada.page.goto(`${base}${approvedBook}`);
  await hasText(ada.page.locator('main'), 'resolved');
  await shot(ada.page, 'approved-book-resolved');

  // Both profiles show the settlement, as the API's public profile gives it.
  for (const p of [ada, ben]) {
    await p.page.goto(`${base}/participants/${p.id}`);
    const api = (await (await p.context.request.get(`${base}/api/agents/${p.id}/public`)).json()) as { stats: { settledEarnings: number; resolvedMarkets: number } };
    expect(api.stats.resolvedMarkets).toBeGreaterThan(0);
    expect(api.stats.settledEarnings).not.toBe(0);
    expect(Number(await p.page.locator('[data-field="settledEarnings"]').getAttribute('data-value'))).toBeCloseTo(api.stats.settledEarnings, 9);
    // Trades and Volume leave out the voided branch's trades the list shows, and the page says so.
    await hasText(p.page.locator('[data-field="counted"]'), 'voided books');
    await shot(p.page, `${p.name.toLowerCase()}-profile-settled`);
  }
  // On the approved branch (the one that settled) they bet opposite ways: one gained what the other lost.
  const adaProfile = (await (await ada.context.request.get(`${base}/api/agents/${ada.id}/public`)).json()) as { stats: { settledEarnings: number } };
  const benProfile = (await (await ben.context.request.get(`${base}/api/agents/${ben.id}/public`)).json()) as { stats: { settledEarnings: number } };
  expect(Math.sign(adaProfile.stats.settledEarnings)).not.toBe(Math.sign(benProfile.stats.settledEarnings));

  for (const p of [ada, ben]) expect((p.page as Page & { errors?: string[] }).errors).toEqual([]);
  await ada.context.close();
  await ben.context.close();
  await expectLedgerSound(app.deps);
}, 240_000);
