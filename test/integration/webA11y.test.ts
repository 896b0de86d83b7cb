import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signUp, type TestPerson } from '../helpers/accounts';
import { axe, AXE_FAILING as FAILING, launchChromium } from '../helpers/browser';
import { buildWorkspace, mint } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { seedWebWorkspaces, type WebWorkspaces } from '../helpers/webWorkspace';

/**
 * Accessibility of every page (issue 59, Deliver 6): each page opened in headless Chromium as a
 * signed-in person, in the light and the dark colour scheme, at desktop (1280x800) and phone
 * (390x844) widths, checked by axe-core (every rule it runs by default). A serious or critical
 * violation fails the page's test, naming the rule and the elements. Pages reached through a form
 * (a trade quote, a metric's and a proposal's review step, a refusal beside a field) are checked as
 * the form leaves them. What axe found, minor and moderate included, lands in test-results/a11y/.
 */
const OUT = join(__dirname, '..', '..', 'test-results', 'a11y');


let app: TestApp;
useTestApp((a) => (app = a));

let browser: Browser;
let base: string;
let seed: WebWorkspaces;
let person: TestPerson;
/** The person's own workspace (they manage it: the settle form and the metric's review step show). */
let own: { slug: string; metricId: string; other: string };
const contexts: Record<'light' | 'dark', BrowserContext | null> = { light: null, dark: null };
const report: Record<string, { id: string; impact: string | null; nodes: number }[]> = {};

afterAll(async () => {
  await browser?.close();
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'axe.json'), `${JSON.stringify(report, null, 2)}\n`);
});

beforeAll(async () => {
  const launching = launchChromium();
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  seed = await seedWebWorkspaces(app);
  person = await signUp(app);
  await mint(app, person.agentId, 2_000);
  const joined = await person.browser.post(`/api/marketplace/${seed.ws.id}/join`);
  if (joined.status !== 200) throw new Error(`join: ${joined.status} ${JSON.stringify(joined.body)}`);
  // A discussion on the seeded proposal: a comment and a reply.
  const comment = await person.browser.post(`/api/proposals/${seed.proposalId}/comments`).set('X-Workspace-Id', seed.ws.slug).send({ body: 'Would this move churn too?' });
  if (comment.status !== 201 && comment.status !== 200) throw new Error(`comment: ${comment.status} ${JSON.stringify(comment.body)}`);
  const reply = await person.browser.post(`/api/proposals/${seed.proposalId}/comments`).set('X-Workspace-Id', seed.ws.slug).send({ body: 'Probably not.', parentId: comment.body.id });
  if (reply.status !== 201 && reply.status !== 200) throw new Error(`reply: ${reply.status} ${JSON.stringify(reply.body)}`);
  const ws = await person.browser.post('/api/workspaces').send({ name: 'Person & Co', public: true });
  if (ws.status !== 201 && ws.status !== 200) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`);
  const metric = await person.browser.post('/api/metrics').set('X-Workspace-Id', ws.body.slug).send({ name: 'Signups', value: 40 });
  if (metric.status !== 201) throw new Error(`metric: ${metric.status} ${JSON.stringify(metric.body)}`);
  // A public workspace the person has not joined: its home offers the Join button.
  own = { slug: ws.body.slug, metricId: metric.body.id, other: (await buildWorkspace(app, { public: true, name: 'Open bench' })).slug };
  browser = await launching;
  for (const scheme of ['light', 'dark'] as const) {
    const ctx = await browser.newContext({ colorScheme: scheme, locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 800 } });
    const signedIn = await ctx.request.post(`${base}/api/auth/sign-in/email`, { data: { email: person.email, password: person.password } });
    if (signedIn.status() !== 200) throw new Error(`sign-in: ${signedIn.status()}`);
    contexts[scheme] = ctx;
  }
}, 90_000);

afterAll(async () => {
  for (const c of Object.values(contexts)) await c?.close();
});

interface PageCase {
  name: string;
  path: () => string;
  status?: number;
  /** After loading: fill and send a form, so the page checked is the one the form leaves. */
  then?: (page: Page) => Promise<void>;
  /** The page must show this (the state the case is about). */
  shows?: string;
}

const PAGES: PageCase[] = [
  { name: 'home', path: () => '/' },
  { name: 'leaderboard', path: () => '/leaderboard?sort=volume&min=0' },
  { name: 'profile', path: () => `/participants/${seed.tradingAgent.id}` },
  { name: 'workspace', path: () => `/w/${seed.ws.slug}` },
  { name: 'metric', path: () => `/w/${seed.ws.slug}/metrics/${seed.revenue.id}`, shows: '.plot canvas' },
  { name: 'metric, manager (settle form)', path: () => `/w/${own.slug}/metrics/${own.metricId}`, shows: '#settle-form' },
  {
    name: 'market with a quote',
    path: () => `/w/${seed.ws.slug}/markets/${seed.marketId}`,
    then: async (page) => {
      await page.locator('#trade-amount').fill('25');
      await Promise.all([page.waitForURL(/#trade$/), page.locator('#trade-quote-button').click()]);
    },
    shows: '#trade-confirm',
  },
  {
    name: 'market, a refusal beside the field',
    path: () => `/w/${seed.ws.slug}/markets/${seed.marketId}`,
    status: 400,
    then: async (page) => {
      await page.locator('#trade-amount').fill('0');
      await Promise.all([page.waitForURL(/#trade$/), page.locator('#trade-quote-button').click()]);
    },
    shows: '#trade-amount-err',
  },
  { name: 'proposals', path: () => `/w/${seed.ws.slug}/proposals` },
  { name: 'track record', path: () => `/w/${seed.ws.slug}/track-record` },
  { name: 'proposal with comments', path: () => `/w/${seed.ws.slug}/proposals/${seed.proposalId}`, shows: 'ol.comments ol.replies' },
  { name: 'new metric', path: () => `/w/${own.slug}/metrics/new`, shows: '#metric-form' },
  {
    name: 'new metric, review step',
    path: () => `/w/${own.slug}/metrics/new`,
    then: async (page) => {
      await page.locator('#metric-name').fill('Revenue');
      await page.locator('#metric-value').fill('500');
      await Promise.all([page.waitForLoadState('load'), page.locator('#metric-review').click()]);
    },
    shows: '#metric-confirm',
  },
  { name: 'new proposal', path: () => `/w/${seed.ws.slug}/proposals/new`, shows: '#proposal-form' },
  {
    name: 'new proposal, review step',
    path: () => `/w/${seed.ws.slug}/proposals/new`,
    then: async (page) => {
      await page.locator('#proposal-title').fill('Annual plans at a discount');
      await page.locator(`input[name="metricIds"][value="${seed.revenue.id}"]`).check();
      await Promise.all([page.waitForLoadState('load'), page.locator('#proposal-review').click()]);
    },
    shows: '#proposal-confirm',
  },
  { name: 'new workspace', path: () => '/workspaces/new', shows: '#workspace-form' },
  { name: 'transfer', path: () => '/transfer', shows: '#transfer-form' },
  { name: 'transfer request (addressed)', path: () => `/transfer?to=${encodeURIComponent(seed.tradingAgent.id)}`, shows: '#transfer-form' },
  { name: 'get credits (grant offered)', path: () => '/credits', shows: '#grant-form' },
  { name: 'workspace, join offered', path: () => `/w/${own.other}`, shows: '#join-form' },
  { name: 'members (manager)', path: () => `/w/${own.slug}/members`, shows: '#invite-form' },
  { name: 'refusal (private workspace)', path: () => `/w/${seed.hidden.slug}`, status: 403 },
  { name: 'not found (unknown book)', path: () => `/w/${seed.ws.slug}/markets/00000000-0000-4000-8000-000000000000`, status: 404 },
  { name: 'sign in', path: () => '/sign-in?next=%2Ftransfer', shows: 'form[action="/sign-in"]' },
  { name: 'sign up', path: () => '/sign-up', shows: 'form[action="/sign-up"]' },
  { name: 'reset password', path: () => '/reset-password', shows: 'form[action="/reset-password"]' },
  { name: 'settings', path: () => '/settings', shows: 'main form' },
  { name: 'not found (unknown page address)', path: () => '/no-such-page-here', status: 404 },
];

const WIDTHS = [
  { label: 'desktop', width: 1280, height: 800 },
  { label: 'phone', width: 390, height: 844 },
] as const;

describe.each(PAGES)('$name', (c) => {
  it.each(['light', 'dark'] as const)('no serious or critical axe violation in the %s scheme, at desktop and phone widths', async (scheme) => {
    const page = await contexts[scheme]!.newPage();
    try {
      const res = await page.goto(`${base}${c.path()}`, { waitUntil: 'load' });
      if (!c.then) expect(res?.status()).toBe(c.status ?? 200);
      // The document the form leaves (a review is a redirect to a GET of the page: its answer, not the 303).
      const answered = c.then ? page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() !== 'GET' ? r.status() !== 303 : r.request().isNavigationRequest() && r.request().redirectedFrom() !== null) : null;
      await c.then?.(page);
      if (answered) expect((await answered).status()).toBe(c.status ?? 200);
      if (c.shows) await page.locator(c.shows).first().waitFor({ state: 'attached' });
      // The scheme is the one asked for (the page's dark colours apply), so the contrast checked is that scheme's.
      expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
      const found: string[] = [];
      for (const w of WIDTHS) {
        await page.setViewportSize({ width: w.width, height: w.height });
        // Charts redraw on resize (a ResizeObserver): let them settle before axe reads the page.
        await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
        const { violations, passes } = await axe(page);
        // Every sideways-scrolling box is reachable by keyboard and named (axe flags only those that overflow with this page's data).
        const unreachable = (await page.evaluate(`[...document.querySelectorAll('.scroll')].filter((e) => e.getAttribute('tabindex') !== '0' || !e.getAttribute('aria-label')).map((e) => e.outerHTML.slice(0, 80))`)) as string[];
        if (unreachable.length) found.push(`${w.label}: scroll boxes without tabindex=0 and a name: ${unreachable.join(' | ')}`);
        expect(passes.map((p) => p.id)).toContain('color-contrast'); // axe ran its rules on this page, contrast included
        report[`${c.name} · ${scheme} · ${w.label}`] = violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
        for (const v of violations.filter((x) => FAILING.has(x.impact ?? ''))) {
          found.push(`${w.label}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => `${JSON.stringify(n.target)} ${n.failureSummary ?? ''}`.trim()).join(' | ')}`);
        }
      }
      expect(found).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
