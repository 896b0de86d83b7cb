import type { Browser, Page } from 'playwright-core';
import { inTransaction } from '../../src/db/tx';
import { lockMarket } from '../../src/services/books';
import { resolveLockedMarket, voidBooksById } from '../../src/services/lifecycle';
import { signUp, type TestPerson } from '../helpers/accounts';
import { axe, AXE_FAILING, launchChromium } from '../helpers/browser';
import { buildWorkspace, mint, type TestAgent, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, trade, trader, type TestMetric } from '../helpers/markets';
import { connectThroughOAuth, resultBody } from '../helpers/mcp';

/**
 * Issue 68, Deliver 5: a workspace's track record held to figures computed by hand, through the API,
 * the page (in Chromium, axe clean in both colour schemes) and the MCP tool, with a decision whose
 * reading has not come yet, a decided book voided, decisions against the market's advice, and a
 * metric hidden from the reader that must leave no trace in what they see.
 *
 * Metric M on 0..1000, first reading 500. Each decision's consensus is pushed by trades to round values:
 *
 * | # | decision | approved | declined | advice   | last | avg change | realised | error | persistence | avg-change | direction |
 * |---|----------|----------|----------|----------|------|------------|----------|-------|-------------|------------|-----------|
 * | 1 | approve  | 600      | 450      | approved | 500  | none (0)   | 640      | +40   | +140        | +140       | held      |
 * | 2 | decline  | 700      | 420      | approved | 520  | +140       | 380      | -40   | -140        | -280       | held      |
 * | 3 | approve  | 550      | 500      | approved | 520  | 0          | (none yet: pending)                                 |
 * | 4 | approve  | 450      | 480      | declined | 520  | 0          | (the approved book voided)                          |
 * | 5 | decline  | 300      | 600      | declined | 520  | 0          | 500      | -100  | -20         | -20        | missed    |
 *
 * Averages over the realised (1, 2, 5), errors as a share of the range (1000): market (0.04 + 0.04 +
 * 0.10) / 3 = 0.06; persistence (0.14 + 0.14 + 0.02) / 3 = 0.1; average change (0.14 + 0.28 +
 * 0.02) / 3 = 0.146667. Hit rate 2 of 3. The average-change rule predicts a direction only in #2
 * (660 > 520) and misses it. Always approve is observable on #1 only (0.04; #2 and #5 unobservable).
 * Calibration: (p, v) = (0.6, 0.64), (0.42, 0.38), (0.6, 0.5); Brier (0.0016 + 0.0016 + 0.01) / 3 =
 * 0.0044, score 0.9956. Advice followed in 1, 3, 5 (2 realised, 1 of 2 held, error 0.07); against in 2
 * and 4 (1 realised, held, error 0.04).
 *
 * Every proposal also opens a pair on metric H, which members may not read (untraded: 100 under
 * both branches, no advice, no reading yet): the owner's record has ten decisions, a member's five.
 */
let app: TestApp;
useTestApp((a) => (app = a), { PUBLIC_BASE_URL: 'listening' });

let base: Date;
let ws: TestWorkspace;
let m: TestMetric;
let hidden: TestMetric;
let t: TestAgent;
let person: TestPerson;
const ids: string[] = [];

const origin = () => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const at = (hours: number) => app.clock.set(new Date(base.getTime() + hours * 3_600_000));
const owner = () => ({ 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id });
/** A member of the Public group (which may not read metric H). */
const member = () => ({ 'X-Agent-Key': t.key, 'X-Workspace-Id': ws.id });

async function propose(title: string, metricId: string): Promise<any> {
  const res = await app.http.post('/api/proposals').set(owner()).send({ title, liquidity: 50, metricIds: [metricId] });
  expect(res.status).toBe(200);
  return res.body;
}
const book = (p: any, metricId: string, branch: 'approved' | 'declined') => p.conditionalMarkets.find((x: any) => x.metricId === metricId && x.branch === branch).id as string;

/** Trades the book's consensus to targetValue (a book opens at the metric's 500). */
async function push(marketId: string, targetValue: number) {
  if (targetValue === 500) return;
  const res = await trade(app, ws, t, { marketId, targetValue, maxBudget: 2000 });
  expect(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`).toMatch(/^200 /);
  expect(res.body.consensus).toBeCloseTo(targetValue, 6);
}

async function decide(p: any, action: 'approve' | 'decline') {
  const res = await app.http.post(`/api/proposals/${p.id}/${action}`).set(owner());
  expect(res.status).toBe(200);
}

async function resolve(marketId: string, value: number) {
  await inTransaction(app.deps.ds, async (mm) => resolveLockedMarket(mm, (await lockMarket(mm, marketId))!, value, app.clock.now()));
}

async function reading(metricId: string, value: number) {
  const res = await app.http.put(`/api/metrics/${metricId}`).set(owner()).send({ value });
  expect(res.status).toBe(200);
}

/** One pair of consensus values pushed, then the decision: the proposal. */
async function decision(title: string, approved: number, declined: number, action: 'approve' | 'decline') {
  const p = await propose(title, m.id);
  await push(book(p, m.id, 'approved'), approved);
  await push(book(p, m.id, 'declined'), declined);
  await decide(p, action);
  ids.push(p.id);
  return p;
}

/** RFC 4180 as a spreadsheet reads it: quoted fields may hold commas, quotes (doubled) and line breaks; CRLF ends a record. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (ch === '"') {
      quoted = !quoted;
    } else if (quoted) {
      field += ch;
    } else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else {
      field += ch;
    }
  }
  if (quoted || field || row.length) throw new Error('CSV does not end with a complete record');
  return rows;
}

beforeAll(async () => {
  const now = new Date();
  base = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 10, 12));
  app.clock.set(base);
  ws = await buildWorkspace(app, { public: true, ownerCredits: 100_000 });
  m = await createMetric(app, ws, { name: 'Signups', value: 500 });
  hidden = await createMetric(app, ws, { name: 'Board secret', value: 100 });
  // Capabilities are the union over groups: every group a member is in must narrow.
  const groups = await app.http.get('/api/groups').set(owner());
  for (const g of groups.body.filter((x: any) => x.name === 'Public' || x.name === 'Trader')) {
    expect((await app.http.put(`/api/groups/${g.id}`).set(owner()).send({ metricPermissions: { [hidden.id]: { read: false } } })).status).toBe(200);
  }
  t = await trader(app, ws, 20_000);

  at(1);
  const p1 = await decision('One: approve, as advised', 600, 450, 'approve');
  at(2);
  await resolve(book(p1, m.id, 'approved'), 640);
  at(3);
  await reading(m.id, 520);
  at(4);
  const p2 = await decision('Two: decline, against the advice', 700, 420, 'decline');
  at(5);
  await resolve(book(p2, m.id, 'declined'), 380);
  at(6);
  await decision('Three: approve, no reading yet', 550, 500, 'approve');
  at(7);
  const p4 = await decision('Four: approve against the advice, then voided', 450, 480, 'approve');
  at(8);
  await inTransaction(app.deps.ds, (mm) => voidBooksById(mm, [book(p4, m.id, 'approved')], 'no reading for the period', app.clock.now()));
  at(9);
  const p5 = await decision('Five: decline, as advised', 300, 600, 'decline');
  at(10);
  await resolve(book(p5, m.id, 'declined'), 500);
  at(11);

  person = await signUp(app);
  expect((await person.browser.post(`/api/marketplace/${ws.id}/join`).send({})).status).toBe(200);
  await mint(app, person.agentId, 10);
}, 120_000);

/** The hand-computed figures a reader of the Public group sees (metric H left out). */
function expectHandFigures(r: any) {
  expect(r.summary).toMatchObject({ decisions: 5, realised: 3, pending: 1, voided: 1 });
  expect(r.summary.market.decisions).toBe(3);
  expect(r.summary.market.meanError).toBeCloseTo(0.06, 6);
  expect(r.summary.market.hitRate).toEqual({ hits: 2, scored: 3, rate: expect.closeTo(2 / 3, 9) });
  const rule = (name: string) => r.summary.rules.find((x: any) => x.rule === name);
  expect(rule('persistence')).toMatchObject({ decisions: 3, marketCloser: 2, hitRate: null, unobservable: 0 });
  expect(rule('persistence').meanError).toBeCloseTo(0.1, 6);
  expect(rule('persistence').marketBetterBy).toBeCloseTo(0.04, 6);
  expect(rule('averageChange')).toMatchObject({ decisions: 3, marketCloser: 2, hitRate: { hits: 0, scored: 1, rate: 0 }, unobservable: 0 });
  expect(rule('averageChange').meanError).toBeCloseTo(0.44 / 3, 6);
  expect(rule('alwaysApprove')).toMatchObject({ decisions: 1, marketCloser: 0, hitRate: { hits: 1, scored: 1, rate: 1 }, unobservable: 2 });
  expect(rule('alwaysApprove').meanError).toBeCloseTo(0.04, 6);
  expect(rule('alwaysApprove').marketBetterBy).toBeCloseTo(0, 6);
  expect(r.summary.advice.followed).toMatchObject({ decisions: 3, realised: 2, hitRate: { hits: 1, scored: 2, rate: 0.5 } });
  expect(r.summary.advice.followed.meanError).toBeCloseTo(0.07, 6);
  expect(r.summary.advice.against).toMatchObject({ decisions: 2, realised: 1, hitRate: { hits: 1, scored: 1, rate: 1 } });
  expect(r.summary.advice.against.meanError).toBeCloseTo(0.04, 6);
  expect(r.summary.advice.none).toBe(0);
  expect(r.calibration.forecasts).toBe(3);
  expect(r.calibration.score).toBeCloseTo(0.9956, 6);
  expect(r.calibration.bins[6]).toMatchObject({ forecasts: 2, meanForecast: expect.closeTo(0.6, 6), meanOutcome: expect.closeTo(0.57, 6) });
  expect(r.calibration.bins[4]).toMatchObject({ forecasts: 1, meanForecast: expect.closeTo(0.42, 6), meanOutcome: expect.closeTo(0.38, 6) });
  // Five decisions in one month: one period of five.
  expect(r.periodKind).toBe('decisions');
  expect(r.periods).toHaveLength(1);
  expect(r.periods[0]).toMatchObject({ label: 'decisions 1-5', decisions: 5, realised: 3, hitRate: { hits: 2, scored: 3 } });
  expect(r.periods[0].persistenceError).toBeCloseTo(0.1, 6);
  expect(r.total).toBe(5);
}

describe('track record', () => {
  it('the API answers the hand-computed figures, entries newest first with the unchosen branch never scored; asOf, paging, CSV, refusals', async () => {
    const res = await app.http.get('/api/track-record').set(member());
    expect(res.status).toBe(200);
    const r = res.body;
    expectHandFigures(r);
    expect(r.definitions.unobservable).toMatch(/Only the decided branch is ever realised/);
    expect(r.entries.map((e: any) => e.proposalId)).toEqual([...ids].reverse());
    const [e5, e4, e3, e2, e1] = r.entries;
    expect(e1).toMatchObject({ decision: 'approved', advice: 'approved', followedAdvice: true, lastReading: 500, averageChange: null, status: 'realised', realisedValue: 640, directionHeld: true });
    expect(e1.error).toBeCloseTo(40, 5);
    expect(e1.persistenceError).toBeCloseTo(140, 9);
    expect(e1.unchosen).toEqual({ branch: 'declined', consensus: expect.closeTo(450, 6), realised: null });
    expect(e2).toMatchObject({ decision: 'declined', advice: 'approved', followedAdvice: false, lastReading: 520, status: 'realised', realisedValue: 380, directionHeld: true });
    expect(e2.averageChange).toBeCloseTo(140, 9);
    expect(e2.averageChangeError).toBeCloseTo(-280, 9);
    expect(e3).toMatchObject({ status: 'pending', realisedValue: null, error: null, directionHeld: null, followedAdvice: true });
    expect(e4).toMatchObject({ status: 'voided', realisedValue: null, error: null, advice: 'declined', followedAdvice: false });
    expect(e5).toMatchObject({ decision: 'declined', status: 'realised', realisedValue: 500, directionHeld: false });
    expect(e5.averageChange).toBeCloseTo(0, 9);
    expect(e5.error).toBeCloseTo(-100, 5);

    // The owner also sees metric H's five pairs: ten decisions, in two periods of five.
    const mine = (await app.http.get('/api/track-record').set(owner())).body;
    expect(mine.summary).toMatchObject({ decisions: 10, realised: 3, pending: 6, voided: 1 });
    expect(mine.summary.advice.none).toBe(5);
    expect(mine.periods.map((p: any) => p.label)).toEqual(['decisions 1-5', 'decisions 6-10']);
    // ... and a member cannot ask for it.
    expect((await app.http.get(`/api/track-record?metricId=${hidden.id}`).set(member())).status).toBe(404);
    const one = (await app.http.get(`/api/track-record?metricId=${m.id}`).set(member())).body;
    expect(one.metric).toEqual({ id: m.id, name: 'Signups', unit: null });
    expect(one.summary.decisions).toBe(5);

    // As it stood before decision 2's book resolved (hour 4.5): #2 pending, only #1 realised.
    const asOf = new Date(base.getTime() + 4.5 * 3_600_000).toISOString();
    const then = (await app.http.get(`/api/track-record?asOf=${asOf}`).set(member())).body;
    expect(then.summary).toMatchObject({ decisions: 2, realised: 1, pending: 1, voided: 0 });
    expect(then.entries[0]).toMatchObject({ proposalId: ids[1], status: 'pending', realisedValue: null });
    expect(then.asOf).toBe(asOf);

    // Pages of two: the cursor walks the five entries, newest first.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/api/track-record?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page: any = (await app.http.get(q).set(member())).body;
      expect(page.summary.decisions).toBe(5);
      seen.push(...page.entries.map((e: any) => e.proposalId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const future = await app.http.get(`/api/track-record?asOf=${new Date(Date.now() + 86_400_000 * 400).toISOString()}`).set(member());
    expect(future.status).toBe(400);
    expect(future.body).toMatchObject({ code: 'validation_failed' });
    expect(future.body.error).toMatch(/asOf.*future/);
    const bad = await app.http.get('/api/track-record?cursor=x').set(member());
    expect(bad.status).toBe(400);

    // The CSV: a header and five rows with the same figures, quoted where a spreadsheet needs it.
    const csv = await app.http.get('/api/track-record/csv').set(member()).buffer(true).parse((resp, done) => {
      let text = '';
      resp.on('data', (c: Buffer) => (text += c.toString('utf8')));
      resp.on('end', () => done(null, text));
    });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/attachment; filename="track-record-.+\.csv"/);
    const rows = parseCsv(csv.body as string);
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.length === rows[0].length)).toBe(true);
    const [header] = rows;
    const row1 = rows[5];
    const field = (name: string) => row1[header.indexOf(name)];
    expect(field('proposalTitle')).toBe('One: approve, as advised');
    expect(field('status')).toBe('realised');
    expect(Number(field('realisedValue'))).toBe(640);
    expect(Number(field('persistenceError'))).toBeCloseTo(140, 9);
    expect(csv.body).not.toContain('Board secret');
    await expectLedgerSound(app.deps);
  });

  it('the MCP tool answers what the API answers the same person', async () => {
    const { client } = await connectThroughOAuth(app, person);
    try {
      const tool = resultBody(await client.callTool({ name: 'track_record', arguments: { workspace: ws.id } }));
      expectHandFigures(tool);
      const api = (await person.browser.get('/api/track-record').set('X-Workspace-Id', ws.id)).body;
      expect(tool).toEqual(api);
    } finally {
      await client.close();
    }
  });

  describe('the page', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    const figure = (page: Page, sel: string) => page.locator(sel).first().getAttribute('data-value');

    it.each(['light', 'dark'] as const)('shows the hand-computed figures, says what cannot be seen, draws its charts and is axe clean (%s)', async (scheme) => {
      const ctx = await browser.newContext({ colorScheme: scheme, locale: 'en-US', timezoneId: 'UTC', viewport: { width: 1280, height: 900 }, extraHTTPHeaders: { 'X-Agent-Key': t.key } });
      try {
        const page = await ctx.newPage();
        const slug = (await app.http.get('/api/workspaces/current').set(member())).body.slug as string;
        // Linked from the workspace page and from the metric's page.
        await page.goto(`${origin()}/w/${slug}`);
        await Promise.all([page.waitForURL(/\/track-record$/), page.getByRole('link', { name: 'Track record of decisions' }).click()]);
        await page.locator('.plot canvas').first().waitFor({ state: 'attached' });
        expect(await page.locator('p[data-field="unobservable"]').innerText()).toMatch(/Only the decided branch is ever realised/);
        expect(await figure(page, 'dd[data-field="decisions"]')).toBe('5');
        expect(await figure(page, 'dd[data-field="pending"]')).toBe('1');
        expect(await figure(page, 'dd[data-field="voided"]')).toBe('1');
        expect(Number(await figure(page, 'dd[data-field="hitRate"]'))).toBeCloseTo(2 / 3, 9);
        expect(Number(await figure(page, 'dd[data-field="marketError"]'))).toBeCloseTo(0.06, 6);
        expect(Number(await figure(page, 'dd[data-field="calibration"]'))).toBeCloseTo(0.9956, 6);
        expect(Number(await figure(page, 'tr[data-rule="persistence"] [data-field="meanError"]'))).toBeCloseTo(0.1, 6);
        expect(Number(await figure(page, 'tr[data-rule="averageChange"] [data-field="meanError"]'))).toBeCloseTo(0.44 / 3, 6);
        expect(await figure(page, 'tr[data-rule="alwaysApprove"] [data-field="unobservable"]')).toBe('2');
        expect(await page.locator('table.record tbody tr').count()).toBe(5);
        expect(await page.locator(`tr[data-proposal="${ids[2]}"] [data-field="realisedValue"]`).innerText()).toBe('not yet realised');
        expect(await page.locator(`tr[data-proposal="${ids[3]}"] [data-field="realisedValue"]`).innerText()).toBe('voided: nothing realised');
        expect(await page.locator(`tr[data-proposal="${ids[1]}"] [data-field="againstAdvice"]`).count()).toBe(1);
        expect(await page.content()).not.toContain('Board secret');
        expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: 900 });
          await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
          const { violations, passes } = await axe(page);
          expect(passes.map((p) => p.id)).toContain('color-contrast');
          expect(violations.filter((v) => AXE_FAILING.has(v.impact ?? '')).map((v) => `${width}: ${v.id}: ${v.help}`)).toEqual([]);
        }

        // The metric's page links to its own record; the CSV downloads from the page.
        await page.goto(`${origin()}/w/${slug}/metrics/${m.id}`);
        await Promise.all([page.waitForURL(/track-record\?metric=/), page.getByRole('link', { name: /Track record of decisions on Signups/ }).click()]);
        expect(await page.locator('h1').innerText()).toBe('Track record: Signups');
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
        expect(download.suggestedFilename()).toBe(`track-record-${slug}.csv`);
      } finally {
        await ctx.close();
      }
    });
  });
});
