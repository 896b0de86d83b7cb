import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { buildWorkspace, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, standingsAdded, trade, trader, type TestMetric } from '../helpers/markets';
import { seedWebWorkspaces } from '../helpers/webWorkspace';

/**
 * Issue 59, reading right: branch books linked both ways, resolved books with their value, time,
 * early or scheduled, reason and payout per share; "Measured" the newest reading; profiles with bots,
 * owner, workspaces, transfers and total earnings; the leaderboard's filters and pages; the
 * workspace description; charts keyed in milliseconds, with time ranges, a legend, units, labels
 * readable in both colour schemes, drawn under the locale tag `en-US@posix` (what LANG=C.UTF-8 gives
 * Chromium, and which Intl rejects): every page here is opened under it. Screenshots land in
 * test-results/web-reading/ (ignored by git).
 */
const OUT = join(__dirname, '..', '..', 'test-results', 'web-reading');
const POSIX = 'en-US@posix';

let browser: Browser;
const contexts = new Set<BrowserContext>();
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const c of contexts) await c.close();
  contexts.clear();
});

let app: TestApp;
useTestApp((a) => (app = a));

let base: string;
let ws: TestWorkspace;
let churn: TestMetric;
let proposalId: string;
let tradingAgent: TestAgent;

const owner = (w: TestWorkspace) => ({ 'X-Agent-Key': w.owner.key, 'X-Workspace-Id': w.id });
const anon = (path: string, w: TestWorkspace) => app.http.get(`/api${path}`).set('X-Workspace-Id', w.slug);

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  const launching = launchChromium();
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  ({ ws, churn, proposalId, tradingAgent } = await seedWebWorkspaces(app));
  browser = await launching;
}, 60_000);

/** Open a page under the `en-US@posix` locale (unless told otherwise), failing on any console or page error. */
async function open(path: string, opts: { status?: number; colorScheme?: 'light' | 'dark'; headers?: Record<string, string> } = {}): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ locale: POSIX, timezoneId: 'UTC', viewport: { width: 1280, height: 900 }, colorScheme: opts.colorScheme ?? 'light', extraHTTPHeaders: opts.headers });
  contexts.add(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const res = await page.goto(`${base}${path}`, { waitUntil: 'load' });
  expect(res?.status()).toBe(opts.status ?? 200);
  return { page, errors };
}

async function field(page: Page, scope: string, name: string): Promise<{ value: string | null; text: string }> {
  const el = page.locator(`${scope} [data-field="${name}"]`).first();
  return { value: await el.getAttribute('data-value'), text: (await el.innerText()).trim() };
}

/** Every chart of the page drawn (a canvas, or its "nothing yet" line). */
async function chartsDrawn(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const plots = [...(globalThis as any).document.querySelectorAll('.plot')];
    return plots.length > 0 && plots.every((el: any) => el.childElementCount > 0);
  }, undefined, { timeout: 10_000 });
}

/** Pixels of the page's first chart canvas: how many are drawn at all, how many are dark (labels on a light page), how many light (on a dark one). */
async function pixels(page: Page, nth = 0): Promise<{ drawn: number; dark: number; light: number }> {
  return (await page.evaluate(`(() => {
    const c = document.querySelectorAll('.plot canvas')[${nth}];
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let drawn = 0, dark = 0, light = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0) drawn++;
      if (d[i + 3] > 200 && d[i] < 60 && d[i + 1] < 60 && d[i + 2] < 60) dark++;
      if (d[i + 3] > 200 && d[i] > 215 && d[i + 1] > 215 && d[i + 2] > 215) light++;
    }
    return { drawn, dark, light };
  })()`)) as { drawn: number; dark: number; light: number };
}

const snap = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
const fmtInstant = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

it('"Measured" is the newest reading: the API (metric, status) and the metric page; an older backfill moves only the first; the unit shown', async () => {
  const m = await createMetric(app, ws, { name: 'Signups', value: 10, unit: ' users ' });
  for (const value of [20, 30]) {
    app.clock.advance(3_600_000);
    expect((await app.http.put(`/api/metrics/${m.id}`).set(owner(ws)).send({ value })).status).toBe(200);
  }
  const logs = (await app.http.get(`/api/metrics/${m.id}/logs`).set(owner(ws))).body.logs;
  expect(logs).toHaveLength(3);
  const [newest, , oldest] = logs.map((l: { asOf: string }) => l.asOf);
  const metric = (await anon(`/metrics/${m.id}`, ws)).body;
  expect(metric.measuredAt).toBe(newest);
  expect(metric.firstMeasuredAt).toBe(oldest);
  expect(newest).not.toBe(oldest);
  const status = (await anon('/status', ws)).body;
  expect(status.metrics.find((s: { id: string }) => s.id === m.id).measuredAt).toBe(newest);
  // A reading dated earlier (a backfill) is not the newest: only the first moves.
  expect((await app.http.post(`/api/metrics/${m.id}/logs/backfill`).set(owner(ws)).send({ readings: [{ at: '2024-01-01T00:00:00Z', value: 5 }] })).status).toBe(200);
  const after = (await anon(`/metrics/${m.id}`, ws)).body;
  expect(after).toMatchObject({ measuredAt: newest, firstMeasuredAt: '2024-01-01T00:00:00.000Z' });

  const { page, errors } = await open(`/w/${ws.slug}/metrics/${m.id}`);
  expect(await field(page, 'dl.facts', 'measuredAt')).toEqual({ value: newest, text: fmtInstant(newest) });
  // The metric's unit: on the metric, its value, its chart, and the workspace home.
  expect(after.unit).toBe('users');
  expect((await field(page, 'dl.facts', 'unit')).text).toBe('users');
  expect((await field(page, 'dl.facts', 'value')).text).toBe('30 users');
  const data = JSON.parse((await page.locator(`script#${await page.locator('.plot[data-chart]').first().getAttribute('data-chart')}`).textContent()) ?? '{}');
  expect(data).toMatchObject({ unit: 'users', yLabel: 'Signups' });
  await chartsDrawn(page);
  expect(errors).toEqual([]);
  const home = await open(`/w/${ws.slug}`);
  expect((await field(home.page, `tr[data-metric="${m.id}"]`, 'value')).text).toBe('30 users');
  // PUT sets or clears it.
  expect((await app.http.put(`/api/metrics/${m.id}`).set(owner(ws)).send({ unit: null })).body.unit).toBeNull();
});

it('a proposal links both branch books per metric and date; each branch book names its branch and links back and across', async () => {
  const p = (await anon(`/proposals/${proposalId}`, ws)).body;
  expect(p.impact.length).toBeGreaterThan(0);
  const { page, errors } = await open(`/w/${ws.slug}/proposals/${proposalId}`);
  for (const i of p.impact) {
    for (const branch of ['approved', 'declined'] as const) {
      const link = page.locator(`tr[data-books="${i.metricId}:${i.targetDate}"] td[data-branch-book="${branch}"] a`);
      expect(await link.getAttribute('href')).toBe(`/w/${ws.slug}/markets/${i[branch].marketId}`);
    }
  }
  const first = p.impact[0];
  await page.locator(`tr[data-books="${first.metricId}:${first.targetDate}"] td[data-branch-book="approved"] a`).click();
  await page.waitForURL(`**/markets/${first.approved.marketId}`);
  expect(await page.locator('[data-field="proposalLink"]').getAttribute('href')).toBe(`/w/${ws.slug}/proposals/${proposalId}`);
  expect(await page.locator('[data-field="proposalLink"]').innerText()).toBe(`Proposal: ${p.title}`);
  expect(await page.locator('[data-field="branch"]').getAttribute('data-value')).toBe('approved');
  expect(await page.locator('[data-field="siblingLink"]').getAttribute('href')).toBe(`/w/${ws.slug}/markets/${first.declined.marketId}`);
  await snap(page, 'branch-book');
  await page.locator('[data-field="siblingLink"]').click();
  await page.waitForURL(`**/markets/${first.declined.marketId}`);
  expect(await page.locator('[data-field="branch"]').getAttribute('data-value')).toBe('declined');
  await page.locator('[data-field="proposalLink"]').click();
  await page.waitForURL(`**/proposals/${proposalId}`);
  expect(errors).toEqual([]);
});

it('resolved books on the metric and market pages: value, when, early or scheduled, the reason, the payout per share', async () => {
  // Early: the owner settles Churn with a reason, after a trade on its first book.
  const books = (await marketsOf(app, ws, churn.id)).filter((b) => b.proposalId === null);
  expect((await trade(app, ws, tradingAgent, { marketId: books[0].id, direction: 'lower', amount: 10 })).status).toBe(200);
  const settled = await app.http.post(`/api/metrics/${churn.id}/settle`).set(owner(ws)).send({ value: 37, reason: 'The quarter closed early' });
  expect(settled.status).toBe(200);
  const ended = (await anon(`/predictions/markets?metricId=${churn.id}&status=resolved,voided`, ws)).body;
  expect(ended.map((b: { id: string }) => b.id).sort()).toEqual([...settled.body.settled].sort());
  expect(ended.map((b: { id: string }) => b.id)).toEqual(expect.arrayContaining(books.map((b) => b.id)));
  for (const b of ended) {
    const v = Math.min(1, Math.max(0, (37 - b.rangeMin) / (b.rangeMax - b.rangeMin)));
    expect(b).toMatchObject({ status: 'resolved', resolvedValue: 37, settledEarly: true, settleReason: 'The quarter closed early' });
    expect(b.payoutPerShare.higher).toBeCloseTo(v, 9);
    expect(b.payoutPerShare.lower).toBeCloseTo(1 - v, 9);
  }
  // The open listing no longer has them; a wrong status is a sentence.
  expect((await anon(`/predictions/markets?metricId=${churn.id}`, ws)).body).toEqual([]);
  const wrong = await anon('/predictions/markets?status=finished', ws);
  expect(wrong.status).toBe(400);
  expect(wrong.body.error).toMatch(/status.*open, closed, resolved, voided/);

  // Scheduled: a book on this hour, a reading inside it, the hour passes, the due books resolve.
  const other = await buildWorkspace(app, { public: true });
  const visits = await createMetric(app, other, { name: 'Visits', value: 100 });
  const hour = app.clock.now().toISOString().slice(0, 13);
  const manual = await app.http.post('/api/predictions/markets').set(owner(other)).send({ metricId: visits.id, targetDate: hour });
  expect(manual.status).toBe(201);
  expect((await app.http.put(`/api/metrics/${visits.id}`).set(owner(other)).send({ value: 150 })).status).toBe(200);
  app.clock.advance(2 * 3_600_000);
  const resolved = await app.http.post('/api/predictions/resolve').set(owner(other)).send({});
  expect(resolved.body.resolved).toContain(manual.body.id);
  const scheduled = (await anon(`/predictions/markets/${manual.body.id}`, other)).body;
  expect(scheduled).toMatchObject({ status: 'resolved', resolvedValue: 150, settledEarly: false, settleReason: null });

  const { page, errors } = await open(`/w/${ws.slug}/metrics/${churn.id}`);
  expect(await page.locator('table.ended tbody tr').count()).toBe(ended.length);
  for (const b of ended) {
    const row = `tr[data-ended="${b.id}"]`;
    expect((await field(page, row, 'resolvedValue')).value).toBe('37');
    expect(await field(page, row, 'resolvedAt')).toEqual({ value: b.resolvedAt, text: fmtInstant(b.resolvedAt) });
    expect((await field(page, row, 'how')).text).toBe('early');
    expect((await field(page, row, 'reason')).text).toBe('The quarter closed early');
    expect((await field(page, row, 'payoutPerShare')).value).toBe(String(b.payoutPerShare.higher));
  }
  await snap(page, 'metric-resolved');
  await page.locator(`tr[data-ended="${ended[0].id}"] th a`).click();
  await page.waitForURL(`**/markets/${ended[0].id}`);
  const facts = `dl[data-resolution="${ended[0].id}"]`;
  expect((await field(page, facts, 'resolvedValue')).value).toBe('37');
  expect((await field(page, facts, 'resolvedAt')).value).toBe(ended[0].resolvedAt);
  expect((await field(page, facts, 'how')).text).toBe('early');
  expect((await field(page, facts, 'reason')).text).toBe('The quarter closed early');
  expect((await field(page, facts, 'payoutHigher')).value).toBe(String(ended[0].payoutPerShare.higher));
  expect((await field(page, facts, 'payoutLower')).value).toBe(String(ended[0].payoutPerShare.lower));
  await snap(page, 'market-resolved');
  expect(errors).toEqual([]);

  const sched = await open(`/w/${other.slug}/metrics/${visits.id}`);
  const row = `tr[data-ended="${manual.body.id}"]`;
  expect((await field(sched.page, row, 'resolvedValue')).value).toBe('150');
  expect((await field(sched.page, row, 'how')).text).toBe('scheduled');
  expect((await field(sched.page, row, 'reason')).text).toBe('—');
  expect(sched.errors).toEqual([]);
});

it('a profile shows its bots, owner, workspaces, transfers and total earnings as the API gives them', async () => {
  const made = await app.http.post('/api/agents').set('X-Agent-Key', tradingAgent.key).send({ nickname: `bot${Date.now() % 1e8}` });
  expect(made.status).toBe(201);
  const sent = await app.http.post('/api/agents/transfer').set('X-Agent-Key', tradingAgent.key).send({ toAgent: made.body.agentId, amount: 5, memo: 'seed money' });
  expect(sent.status).toBe(200);
  await standingsAdded(app);
  const mine = { 'X-Agent-Key': tradingAgent.key };
  const p = (await app.http.get(`/api/agents/${tradingAgent.id}/public`).set(mine)).body;
  expect(p.bots.map((b: { id: string }) => b.id)).toEqual([made.body.agentId]);
  expect(p.transfers).toHaveLength(1);
  expect(p.activeWorkspaces.map((w: { id: string }) => w.id)).toContain(ws.id);

  const { page, errors } = await open(`/participants/${tradingAgent.id}`, { headers: mine });
  expect((await field(page, 'dl.facts', 'totalEarnings')).value).toBe(String(p.stats.totalEarnings));
  expect((await field(page, 'dl.facts', 'withBotsEarnings')).value).toBe(String(p.withBotsEarnings));
  expect((await field(page, `tr[data-bot="${made.body.agentId}"]`, 'totalEarnings')).value).toBe(String(p.bots[0].totalEarnings));
  expect(await page.locator(`tr[data-bot="${made.body.agentId}"] a`).getAttribute('href')).toBe(`/participants/${made.body.agentId}`);
  expect((await field(page, 'dl.about', 'workspaces')).value).toBe(String(p.activeWorkspaces.length));
  for (const w of p.activeWorkspaces) expect(await page.locator(`dl.about a[href="/w/${w.id}"]`).innerText()).toBe(w.name);
  const t = p.transfers[0];
  expect((await field(page, `tr[data-transfer="${t.id}"]`, 'credits')).value).toBe(String(t.credits));
  expect(await page.locator(`tr[data-transfer="${t.id}"]`).innerText()).toContain('seed money');
  await chartsDrawn(page);
  await snap(page, 'profile-own');
  expect(errors).toEqual([]);

  // The bot's page names its owner; a stranger sees no transfers (the API lists them to the owner only).
  const bot = await open(`/participants/${made.body.agentId}`);
  expect((await field(bot.page, 'dl.about', 'owner')).value).toBe(tradingAgent.id);
  expect(await bot.page.locator('[data-field="owner"] a').getAttribute('href')).toBe(`/participants/${tradingAgent.id}`);
  const stranger = await open(`/participants/${tradingAgent.id}`);
  expect(await stranger.page.locator('tr[data-transfer]').count()).toBe(0);
  expect(await stranger.page.locator('#transfers-h + p').innerText()).toContain('None you may see');
});

it('the leaderboard filters by season and workspace and pages, every link keeping the filters', async () => {
  await standingsAdded(app);
  const now = app.clock.now().getTime();
  const season = await app.http.post('/api/seasons').set('X-API-Key', app.masterKey).send({ name: 'Now', startsAt: new Date(now - 30 * 86_400_000).toISOString(), endsAt: new Date(now + 86_400_000).toISOString() });
  expect(season.status).toBe(201);
  const past = await app.http.post('/api/seasons').set('X-API-Key', app.masterKey).send({ name: 'Long ago', startsAt: '2020-01-01T00:00:00Z', endsAt: '2020-02-01T00:00:00Z' });
  expect(past.status).toBe(201);
  // A second trader in the workspace, so there are two pages of one row.
  const t2 = await trader(app, ws, 200);
  const fresh = await createMetric(app, ws, { name: 'Leads', value: 300 });
  const book = (await marketsOf(app, ws, fresh.id)).find((b) => b.proposalId === null);
  expect((await trade(app, ws, t2, { marketId: book.id, direction: 'higher', amount: 20 })).status).toBe(200);
  expect((await trade(app, ws, tradingAgent, { marketId: book.id, direction: 'lower', amount: 10 })).status).toBe(200);
  expect((await app.http.post(`/api/metrics/${fresh.id}/settle`).set(owner(ws)).send({ value: 600, reason: 'counted' })).status).toBe(200);
  await standingsAdded(app);

  const api = (q: string) => app.http.get(`/api/leaderboard?${q}`).then((r) => r.body);
  const q = `min=0&season=${season.body.id}&ws=${ws.slug}&limit=1`;
  const all = await api(`minResolvedMarkets=0&seasonId=${season.body.id}&workspaceId=${ws.slug}&limit=200`);
  expect(all.total).toBeGreaterThanOrEqual(2);
  const { page, errors } = await open(`/leaderboard?${q}`);
  expect(await page.locator('table.board tbody tr[data-agent]').count()).toBe(1);
  expect(await page.locator('table.board tbody tr[data-agent]').getAttribute('data-agent')).toBe(all.rows[0].agent.id);
  expect(await page.locator('#lb-season option[selected]').getAttribute('value')).toBe(season.body.id);
  expect(await page.locator('#lb-ws option[selected]').getAttribute('value')).toBe(ws.slug);
  expect(await page.locator('main .lead').first().innerText()).toContain('season Now');
  const keeps = (href: string | null) => {
    const u = new URL(href ?? '', base);
    expect(u.searchParams.get('season')).toBe(season.body.id);
    expect(u.searchParams.get('ws')).toBe(ws.slug);
    expect(u.searchParams.get('min')).toBe('0');
    expect(u.searchParams.get('limit')).toBe('1');
    return u;
  };
  for (const a of await page.locator('nav.sorts a').all()) keeps(await a.getAttribute('href'));
  expect(keeps(await page.locator('nav.pages a[rel="next"]').getAttribute('href')).searchParams.get('offset')).toBe('1');
  await page.locator('nav.pages a[rel="next"]').click();
  await page.waitForURL('**offset=1**');
  expect(await page.locator('table.board tbody tr[data-agent]').getAttribute('data-agent')).toBe(all.rows[1].agent.id);
  expect(keeps(await page.locator('nav.pages a[rel="prev"]').getAttribute('href')).searchParams.get('offset')).toBeNull();
  await snap(page, 'leaderboard-filtered');
  // The filter form: another season, the workspace kept.
  await page.locator('#lb-season').selectOption(past.body.id);
  await page.locator('form.filters button').click();
  await page.waitForURL(`**season=${past.body.id}**`);
  expect(new URL(page.url()).searchParams.get('ws')).toBe(ws.slug);
  expect(new URL(page.url()).searchParams.get('offset')).toBeNull();
  expect(await page.locator('table.board tbody').innerText()).toContain('Nobody qualifies yet');
  expect(errors).toEqual([]);
  // A season or workspace the API does not know is its refusal.
  expect((await app.http.get('/leaderboard?season=nope')).status).toBe(404);
  expect((await app.http.get('/leaderboard?offset=-1')).status).toBe(400);
});

it("the workspace's description heads its home page", async () => {
  expect((await app.http.patch(`/api/workspaces/${ws.id}`).set(owner(ws)).send({ description: 'Growth metrics of <Acme>, weekly.' })).status).toBe(200);
  expect((await anon('/status', ws)).body.workspace.description).toBe('Growth metrics of <Acme>, weekly.');
  const { page, errors } = await open(`/w/${ws.slug}`);
  expect(await page.locator('[data-field="workspaceDescription"]').innerText()).toBe('Growth metrics of <Acme>, weekly.');
  expect(errors).toEqual([]);
});

// Last: it fixes the app's clock (trades inside one second need it).
it('charts: keyed in milliseconds, the range from the data, time ranges, legend and units, readable in both schemes, under en-US@posix', async () => {
  // A fresh book, and two trades 400 ms apart in the second after it opened (the book's opening
  // instant is the database's, so the trades are placed from it).
  const m = await createMetric(app, ws, { name: 'Clicks', value: 400 });
  const book = (await marketsOf(app, ws, m.id)).find((b) => b.proposalId === null);
  const t = await trader(app, ws, 500);
  // Untraded, its chart has one point (the opening): the axis spans an hour either side, not a second.
  const lone = await open(`/w/${ws.slug}/markets/${book.id}`);
  await chartsDrawn(lone.page);
  expect(Number(await lone.page.locator('.plot[data-chart]').first().getAttribute('data-x-span'))).toBeGreaterThanOrEqual(2 * 3_600_000);
  expect(lone.errors).toEqual([]);
  const second = Math.ceil(Date.parse(book.createdAt) / 1000) * 1000;
  app.clock.set(new Date(second + 100));
  const first = await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 10 });
  app.clock.set(new Date(second + 500));
  const next = await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 10 });
  expect([first.status, next.status]).toEqual([200, 200]);
  const history = (await anon(`/predictions/markets/${book.id}/history`, ws)).body;
  const ats = history.points.map((p: { at: string }) => Date.parse(p.at));
  expect(ats).toHaveLength(2);
  expect(Math.floor(ats[0] / 1000)).toBe(Math.floor(ats[1] / 1000));
  expect(ats[0]).not.toBe(ats[1]);

  const { page, errors } = await open(`/w/${ws.slug}/markets/${book.id}`);
  expect(await page.evaluate('navigator.language')).toBe(POSIX); // the tag Intl rejects reached the page
  await chartsDrawn(page);
  const plot = page.locator('.plot[data-chart]').first();
  const data = JSON.parse((await page.locator(`script#${await plot.getAttribute('data-chart')}`).textContent()) ?? '{}');
  expect(data.x).toEqual(expect.arrayContaining(ats));
  expect(data.x.filter((x: number) => x === ats[0] || x === ats[1])).toHaveLength(2);
  expect(await plot.getAttribute('data-points')).toBe(String(data.x.length));
  // The axis spans what was traded (the opening and two trades inside about a second), not years.
  const span = Number(await plot.getAttribute('data-x-span'));
  expect(span).toBeGreaterThan(0);
  expect(span).toBeLessThan(5_000);
  expect((await pixels(page)).drawn).toBeGreaterThan(500);
  // Legend with the series and the x axis' name; the y axis names the metric.
  const legend = page.locator('.chart .u-legend').first();
  expect(await legend.innerText()).toContain('Consensus');
  expect(await legend.innerText()).toContain('Time (UTC)');
  // Pointing at the chart reads the instant (to the millisecond, in UTC) and the value in the legend.
  await page.locator('.plot .u-over').first().hover();
  expect(await legend.innerText()).toMatch(/\d{2}:\d{2}:\d{2}\.\d{3} UTC/);
  // Time ranges: a week, then all again.
  await page.locator('.ranges button[data-range="1w"]').first().click();
  expect(Number(await plot.getAttribute('data-x-span'))).toBeGreaterThan(6 * 86_400_000);
  expect(await page.locator('.ranges button[data-range="1w"]').first().getAttribute('aria-pressed')).toBe('true');
  await page.locator('.ranges button[data-range="all"]').first().click();
  expect(Number(await plot.getAttribute('data-x-span'))).toBeLessThan(5_000);
  await snap(page, 'chart-light');
  // Light scheme: dark labels; dark scheme: light labels, and nothing drawn dark on the dark page.
  expect((await pixels(page)).dark).toBeGreaterThan(50);
  expect(errors).toEqual([]);
  const night = await open(`/w/${ws.slug}/markets/${book.id}`, { colorScheme: 'dark' });
  await chartsDrawn(night.page);
  const night_ = await pixels(night.page);
  expect(night_.light).toBeGreaterThan(50);
  expect(night_.dark).toBe(0);
  await snap(night.page, 'chart-dark');
  expect(night.errors).toEqual([]);
  // Units: the profile's balance charts are in credits, on the axis and in the legend.
  const prof = await open(`/participants/${t.id}`, { headers: { 'X-Agent-Key': t.key } });
  await chartsDrawn(prof.page);
  await prof.page.locator('.plot .u-over').first().hover();
  expect(await prof.page.locator('.chart .u-legend').first().innerText()).toMatch(/\d cr\b/);
  expect(prof.errors).toEqual([]);
});
