import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { signUp, type TestPerson } from '../helpers/accounts';
import { launchChromium } from '../helpers/browser';
import { mint } from '../helpers/factories';
import { expectLedgerSound, uniqueName, useTestApp, type TestApp } from '../helpers/harness';

/**
 * Acting from the pages (issue 59, Deliver 3) over real HTTP: people with a session cookie post the
 * pages' own forms (urlencoded, Origin this app) and follow the 303s; the API's state after each act
 * is read back through /api. A resent form acts once (its Idempotency-Key); the ledger holds after
 * every scenario.
 */
let app: TestApp;
useTestApp((a) => (app = a));

let base: string;
let owner: TestPerson;
let trader: TestPerson;
let slug: string;
let metricId: string;
let marketId: string;
let proposalId: string;

beforeAll(async () => {
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  [owner, trader] = await Promise.all([signUp(app), signUp(app)]);
  await mint(app, owner.agentId, 10_000);
  await mint(app, trader.agentId, 2_000);
});
afterEach(() => expectLedgerSound(app.deps));

/** The hidden and filled fields of one form on a page (by its id), as the browser would send them. */
function formOf(page: string, id: string): URLSearchParams {
  const start = page.indexOf(`id="${id}"`);
  if (start < 0) throw new Error(`no form #${id} on the page`);
  const open = page.lastIndexOf('<form', start);
  const body = page.slice(open, page.indexOf('</form>', start));
  const out = new URLSearchParams();
  for (const m of body.matchAll(/<input([^>]*)>/g)) {
    const attr = (n: string) => m[1].match(new RegExp(`\\b${n}="([^"]*)"`))?.[1];
    const type = attr('type') ?? 'text';
    const name = attr('name');
    if (!name || ((type === 'radio' || type === 'checkbox') && !/\bchecked\b/.test(m[1]))) continue;
    out.append(name, (attr('value') ?? '').replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>'));
  }
  return out;
}

async function post(who: TestPerson | null, path: string, values: URLSearchParams | Record<string, string>, origin = base) {
  const body = (values instanceof URLSearchParams ? values : new URLSearchParams(values)).toString();
  const agent = who ? who.browser : app.http;
  return agent.post(path).set('Origin', origin).type('form').send(body);
}

async function page(who: TestPerson, path: string): Promise<string> {
  const res = await who.browser.get(path);
  expect(res.status).toBe(200);
  return res.text;
}

/** The form as drawn on the page, with some fields filled in. */
async function filled(who: TestPerson, path: string, id: string, fields: Record<string, string | string[]>): Promise<URLSearchParams> {
  const f = formOf(await page(who, path), id);
  for (const [k, v] of Object.entries(fields)) {
    f.delete(k);
    for (const x of Array.isArray(v) ? v : [v]) f.append(k, x);
  }
  return f;
}

/**
 * A form's review step: the post answers 303 to a GET of the page with the reviewed values (so Back
 * never asks to resend), and that page shows the review.
 */
async function review(who: TestPerson, path: string, values: URLSearchParams): Promise<{ status: number; text: string; location: string }> {
  const res = await post(who, path, values);
  expect(res.status).toBe(303);
  const location = res.headers.location as string;
  expect(location.startsWith(`${path}?`)).toBe(true);
  expect(new URL(location, base).searchParams.get('step')).toBe('review');
  const shown = await who.browser.get(location);
  return { status: shown.status, text: shown.text, location };
}

const api = (who: TestPerson, path: string) => who.browser.get(`/api${path}`).set('X-Workspace-Id', slug);

it('creates a workspace, then a metric with its cost shown first; the confirm sent twice creates one', async () => {
  const name = uniqueName('Acme');
  const ws = await post(owner, '/workspaces/new', await filled(owner, '/workspaces/new', 'workspace-form', { name, public: 'true' }));
  expect(ws.status).toBe(303);
  const m = /^\/w\/([^/]+)\/metrics\/new\?done=workspace$/.exec(ws.headers.location);
  expect(m).not.toBeNull();
  slug = decodeURIComponent(m![1]);
  expect((await api(owner, '/workspaces/current')).body).toMatchObject({ name, public: true, ownerId: owner.agentId });
  expect(await page(owner, ws.headers.location)).toContain('data-done="workspace"');

  // Review: the dry run's cost, nothing written.
  const form = await filled(owner, `/w/${slug}/metrics/new`, 'metric-form', { name: 'Revenue', value: '500' });
  const reviewed = await review(owner, `/w/${slug}/metrics/new`, form);
  expect(reviewed.status).toBe(200);
  const quote = (await owner.browser.post('/api/metrics').set('X-Workspace-Id', slug).send({ name: 'Revenue', value: 500, dryRun: true })).body;
  expect(quote.subsidyNeeded).toBeGreaterThan(0);
  expect(reviewed.text).toContain(`data-field="subsidyNeeded" data-value="${quote.subsidyNeeded}"`);
  expect((await api(owner, '/metrics')).body).toEqual([]);
  const balanceBefore = (await api(owner, '/agents/me/balance')).body.balance;

  // Confirm, twice (a double click, a resent form): one metric, paid once.
  const confirm = formOf(reviewed.text, 'metric-confirm-form');
  expect(confirm.get('idem')).toBe(form.get('idem'));
  const [first, again] = [await post(owner, `/w/${slug}/metrics/new`, confirm), await post(owner, `/w/${slug}/metrics/new`, confirm)];
  expect(first.status).toBe(303);
  expect(again.headers.location).toBe(first.headers.location);
  metricId = /\/metrics\/([^/?#]+)/.exec(first.headers.location)![1];
  const metrics = (await api(owner, '/metrics')).body;
  expect(metrics.map((x: { id: string }) => x.id)).toEqual([metricId]);
  expect((await api(owner, '/agents/me/balance')).body.balance).toBeCloseTo(balanceBefore - quote.subsidyNeeded, 6);
  marketId = (await api(owner, `/predictions/markets?metricId=${metricId}`)).body[0].id;
});

it('a refusal comes back as the API sentence beside its field, with the API status; nothing is created', async () => {
  const form = await filled(owner, `/w/${slug}/metrics/new`, 'metric-form', { name: '  ', value: 'lots' });
  const res = await post(owner, `/w/${slug}/metrics/new`, form);
  expect(res.status).toBe(400);
  expect(res.text).toMatch(/id="metric-name-err" role="alert" data-code="validation_failed">The body field &quot;name&quot; is refused: must not be blank/);
  expect(res.text).toContain('aria-invalid="true" aria-describedby="metric-name-err"');
  // What was typed is drawn again, and the form keeps its key.
  expect(formOf(res.text, 'metric-form').get('value')).toBe('lots');
  expect(formOf(res.text, 'metric-form').get('idem')).toBe(form.get('idem'));
  expect((await api(owner, '/metrics')).body).toHaveLength(1);
});

it('cross-site posts are refused, and a post without a session goes to sign-in and back', async () => {
  const form = await filled(owner, `/w/${slug}/metrics/new`, 'metric-form', { name: 'Evil' });
  form.set('step', 'confirm');
  const evil = await post(owner, `/w/${slug}/metrics/new`, form, 'https://evil.example');
  expect(evil.status).toBe(403);
  expect(evil.text).toContain('data-code="origin_not_allowed"');
  // A browser's word on where the post came from decides: cross-site is refused whatever Origin says,
  // same-origin passes with the "Origin: null" a no-referrer page sends with its own form posts.
  const path = `/w/${slug}/metrics/new`;
  const crossSite = await owner.browser.post(path).set('Origin', base).set('Sec-Fetch-Site', 'cross-site').type('form').send(form.toString());
  expect(crossSite.status).toBe(403);
  const reviewValues = new URLSearchParams(form);
  reviewValues.set('step', 'review');
  const sameSite = await owner.browser.post(path).set('Origin', 'null').set('Sec-Fetch-Site', 'same-origin').type('form').send(reviewValues.toString());
  expect(sameSite.status).toBe(303);
  const anon = await post(null, `/w/${slug}/markets/${marketId}`, { form: 'trade', back: `/w/${slug}/markets/${marketId}`, direction: 'higher', amount: '5', step: 'confirm' });
  expect(anon.status).toBe(303);
  expect(anon.headers.location).toBe(`/sign-in?next=${encodeURIComponent(`/w/${slug}/markets/${marketId}`)}`);
  expect((await api(owner, '/metrics')).body).toHaveLength(1);
  expect((await api(owner, `/predictions/markets/${marketId}`)).body.tradeCount).toBe(0);
});

it('a second person joins, proposes with the subsidy shown first, comments and replies; the owner approves', async () => {
  const market = `/w/${slug}/markets/${marketId}`;
  const join = await post(trader, market, formOf(await page(trader, market), 'join-form'));
  expect(join.status).toBe(303);
  expect((await api(trader, '/workspaces/current')).body.capabilities).toContain('trade');

  const path = `/w/${slug}/proposals/new`;
  const form = await filled(trader, path, 'proposal-form', { title: 'Ship the <new> onboarding', description: 'Shorter sign-up.', metricIds: [metricId], liquidity: '15' });
  const reviewed = await review(trader, path, form);
  expect(reviewed.status).toBe(200);
  const quote = (await trader.browser.post('/api/proposals').set('X-Workspace-Id', slug).send({ title: 'x', metricIds: [metricId], liquidity: 15, dryRun: true })).body;
  expect(reviewed.text).toContain(`data-field="subsidyNeeded" data-value="${quote.subsidyNeeded}"`);
  expect((await api(trader, '/proposals')).body).toEqual([]);
  const confirm = formOf(reviewed.text, 'proposal-confirm-form');
  const made = await post(trader, path, confirm);
  expect(made.status).toBe(303);
  expect((await post(trader, path, confirm)).headers.location).toBe(made.headers.location);
  proposalId = /\/proposals\/([^/?#]+)/.exec(made.headers.location)![1];
  const proposals = (await api(trader, '/proposals')).body;
  expect(proposals.map((p: { id: string; title: string }) => [p.id, p.title])).toEqual([[proposalId, 'Ship the <new> onboarding']]);

  // Comment, then a reply under it.
  const ppath = `/w/${slug}/proposals/${proposalId}`;
  const comment = await post(trader, ppath, await filled(trader, ppath, 'comment-form', { body: 'It halves the steps.' }));
  expect(comment.status).toBe(303);
  expect(comment.headers.location).toMatch(new RegExp(`^${ppath}\\?done=comment#c-`));
  const [c1] = (await api(trader, `/proposals/${proposalId}/comments`)).body;
  const ownerView = await page(owner, ppath);
  const reply = formOf(ownerView, `reply-${c1.id}-body`);
  reply.set('body', 'Measure it first.');
  expect((await post(owner, ppath, reply)).status).toBe(303);
  const comments = (await api(owner, `/proposals/${proposalId}/comments`)).body;
  expect(comments.map((c: { body: string; parentId: string | null; authorId: string }) => [c.body, c.parentId, c.authorId])).toEqual([
    ['It halves the steps.', null, trader.agentId],
    ['Measure it first.', c1.id, owner.agentId],
  ]);
  const shown = await page(trader, ppath);
  expect(shown).toContain('Measure it first.');
  // A blank comment: the API's sentence beside the field.
  const blank = await post(trader, ppath, await filled(trader, ppath, 'comment-form', { body: ' ' }));
  expect(blank.status).toBe(400);
  expect(blank.text).toContain('id="comment-body-err"');

  // Buttons by capability: the proposer may withdraw, not approve; the owner may approve.
  expect(shown).toContain('id="withdraw-button"');
  expect(shown).not.toContain('id="approve-button"');
  expect(ownerView).toContain('id="approve-button"');
  // The API decides all the same: the proposer's approve is refused.
  const sneaky = await post(trader, ppath, { form: 'approve', back: ppath });
  expect(sneaky.status).toBe(403);
  expect((await api(trader, `/proposals/${proposalId}`)).body.status).toBe('pending');
});

it('trades with a quote (shares, cost, payout if right, consensus after); the confirm resent trades once; sells; places and cancels an order', async () => {
  const path = `/w/${slug}/markets/${marketId}`;
  const form = await filled(trader, path, 'trade-form', { direction: 'lower', amount: '30' });
  const reviewed = await review(trader, path, form);
  expect(reviewed.status).toBe(200);
  const quote = (await trader.browser.post('/api/predictions/trade').set('X-Workspace-Id', slug).send({ marketId, direction: 'lower', amount: 30, dryRun: true })).body;
  for (const [f, v] of [['shares', quote.shares], ['cost', quote.cost], ['payout-if-right', quote.shares], ['consensus-after', quote.consensus], ['consensus-now', quote.prevConsensus]]) {
    expect(reviewed.text).toContain(`data-field="${f}" data-value="${v}"`);
  }
  expect((await api(trader, `/predictions/markets/${marketId}`)).body.tradeCount).toBe(0);
  const confirm = formOf(reviewed.text, 'trade-confirm-form');
  const done = await post(trader, path, confirm);
  expect(done.status).toBe(303);
  expect(done.headers.location).toBe(`${path}?done=trade#trade`);
  expect((await post(trader, path, confirm)).status).toBe(303);
  const trades = (await api(trader, `/agents/me/trades`)).body.filter((t: { marketId: string }) => t.marketId === marketId);
  expect(trades).toHaveLength(1);
  expect(trades[0]).toMatchObject({ direction: 'lower', kind: 'buy' });
  expect((await api(trader, `/predictions/markets/${marketId}`)).body.tradeCount).toBe(1);
  // The same key with other values (a form edited after it acted): refused, and drawn again with a fresh key.
  const edited = new URLSearchParams(confirm);
  edited.set('amount', '31');
  const reused = await post(trader, path, edited);
  expect(reused.status).toBe(409);
  expect(reused.text).toContain('data-code="idempotency_key_reuse"');
  expect(formOf(reused.text, 'trade-form').get('idem')).not.toBe(confirm.get('idem'));
  expect((await api(trader, `/predictions/markets/${marketId}`)).body.tradeCount).toBe(1);

  // The position, with a sell (Review then Confirm).
  const after = await page(trader, `${path}?done=trade`);
  expect(after).toContain('data-done="trade"');
  const pos = (await api(trader, '/agents/me/positions')).body.find((p: { marketId: string }) => p.marketId === marketId);
  expect(after).toContain(`data-position="${marketId}"`);
  expect(after).toContain(`data-field="shares" data-value="${pos.shares}"`);
  const sell = formOf(after, 'sell-form');
  sell.set('sellShares', String(pos.shares / 2));
  const sellReview = await review(trader, path, sell);
  expect(sellReview.status).toBe(200);
  expect(sellReview.text).toContain('data-field="proceeds"');
  expect((await post(trader, path, formOf(sellReview.text, 'sell-confirm-form'))).status).toBe(303);
  const left = (await api(trader, '/agents/me/positions')).body.find((p: { marketId: string }) => p.marketId === marketId);
  expect(left.shares).toBeCloseTo(pos.shares / 2, 6);
  // The workspace's home lists the position, linking to its book.
  expect(await page(trader, `/w/${slug}`)).toContain(`<tr data-position="${marketId}"><th scope="row"><a href="/w/${slug}/markets/${marketId}#position">`);

  // A limit order, placed (resent: once) and cancelled.
  const market = (await api(trader, `/predictions/markets/${marketId}`)).body;
  const order = await filled(trader, path, 'order-form', { direction: 'higher', limit: String(market.rangeMin + (market.consensus - market.rangeMin) / 2), amount: '10' });
  expect((await post(trader, path, order)).status).toBe(303);
  expect((await post(trader, path, order)).status).toBe(303);
  const open = (await api(trader, `/predictions/orders?marketId=${marketId}&status=open`)).body;
  expect(open).toHaveLength(1);
  const withOrder = await page(trader, path);
  expect(withOrder).toContain(`data-order="${open[0].id}"`);
  const cancel = formOf(withOrder, `order-cancel-${open[0].id}`);
  expect((await post(trader, path, cancel)).status).toBe(303);
  expect((await api(trader, `/predictions/orders?marketId=${marketId}&status=open`)).body).toEqual([]);
  // A refusal of a money act: the API's sentence, nothing spent.
  const broke = await post(trader, path, await filled(trader, path, 'trade-form', { direction: 'higher', amount: '0' }));
  expect(broke.status).toBe(400);
  expect(broke.text).toContain('id="trade-amount-err"');
});

it('funds an unfunded book from its page', async () => {
  const opened = await owner.browser.post('/api/predictions/markets').set('X-Workspace-Id', slug).send({ metricId, targetDate: '2031-06', liquidity: 0 });
  expect(opened.status).toBe(201);
  expect(opened.body.funded).toBe(false);
  const path = `/w/${slug}/markets/${opened.body.id}`;
  const shown = await page(trader, path);
  expect(shown).not.toContain('id="trade-form"');
  const form = formOf(shown, 'fund-form');
  form.set('credits', '25');
  expect((await post(trader, path, form)).status).toBe(303);
  expect((await post(trader, path, form)).status).toBe(303);
  const book = (await api(trader, `/predictions/markets/${opened.body.id}`)).body;
  expect(book.funded).toBe(true);
  expect(book.liquidity).toBe(25);
  expect(await page(trader, path)).toContain('id="trade-form"');
});

it('the owner approves from the page; transfers credits from /transfer, once when resent', async () => {
  const ppath = `/w/${slug}/proposals/${proposalId}`;
  const approve = formOf(await page(owner, ppath), 'approve-button');
  const res = await post(owner, ppath, approve);
  expect(res.status).toBe(303);
  expect((await api(owner, `/proposals/${proposalId}`)).body.status).toBe('approved');
  expect(await page(owner, ppath)).not.toContain('id="approve-button"');

  const before = (await api(trader, '/agents/me/balance')).body.balance;
  const form = await filled(trader, '/transfer', 'transfer-form', { toAgent: owner.agentId, amount: '7', memo: 'thanks' });
  const sent = await post(trader, '/transfer', form);
  expect(sent.status).toBe(303);
  expect(sent.headers.location).toBe('/transfer?done=transfer');
  expect((await post(trader, '/transfer', form)).status).toBe(303);
  expect((await api(trader, '/agents/me/balance')).body.balance).toBeCloseTo(before - 7, 6);
  const out = (await api(trader, '/agents/transfers?direction=out')).body;
  expect(out.filter((t: { memo: string }) => t.memo === 'thanks')).toHaveLength(1);
  // Short of credits: the API's refusal, beside the form.
  const short = await post(trader, '/transfer', await filled(trader, '/transfer', 'transfer-form', { toAgent: owner.agentId, amount: '99999999' }));
  expect(short.status).toBe(409);
  expect(short.text).toContain('data-code="insufficient_balance"');
});

describe('in Chromium with script off', () => {
  const OUT = join(__dirname, '..', '..', 'test-results', 'web-acts');
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it('a metric and a proposal with their cost shown first, then a comment: each form posts, redirects and says done', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    try {
      expect((await context.request.post(`${base}/api/auth/sign-in/email`, { data: { email: owner.email, password: owner.password } })).status()).toBe(200);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
      await page.goto(`${base}/w/${slug}/metrics/new`);
      await page.locator('#metric-name').fill('Signups');
      await page.locator('#metric-value').fill('120');
      await Promise.all([page.waitForURL(new RegExp(`/w/${slug}/metrics/new\\?.*step=review`)), page.locator('#metric-review').click()]);
      const quote = (await owner.browser.post('/api/metrics').set('X-Workspace-Id', slug).send({ name: 'Signups', value: 120, dryRun: true })).body;
      expect(await page.locator('#cost').getAttribute('data-value')).toBe(String(quote.subsidyNeeded));
      await page.screenshot({ path: join(OUT, 'metric-cost.png'), fullPage: true });
      await Promise.all([page.waitForURL(/\/metrics\/[0-9a-f-]{36}\?done=metric$/), page.locator('#metric-confirm').click()]);
      expect((await api(owner, '/metrics')).body.map((m: { name: string }) => m.name)).toContain('Signups');

      await page.goto(`${base}/w/${slug}/proposals/new`);
      await page.locator('#proposal-title').fill('Free trial for a month');
      await page.locator(`input[name="metricIds"][value="${metricId}"]`).check();
      await Promise.all([page.waitForURL(new RegExp(`/w/${slug}/proposals/new\\?.*step=review`)), page.locator('#proposal-review').click()]);
      expect(Number(await page.locator('#cost').getAttribute('data-value'))).toBeGreaterThan(0);
      await page.screenshot({ path: join(OUT, 'proposal-subsidy.png'), fullPage: true });
      await Promise.all([page.waitForURL(/\/proposals\/[0-9a-f-]{36}\?done=proposal$/), page.locator('#proposal-confirm').click()]);
      await page.locator('#comment-body').fill('Worth a try.');
      await Promise.all([page.waitForURL(/\?done=comment#c-/), page.getByRole('button', { name: 'Post the comment' }).click()]);
      expect(await page.locator('[data-done="comment"]').innerText()).toBe('Done: your comment is posted.');
      expect(await page.locator('ol.comments .body').last().innerText()).toBe('Worth a try.');
      expect(await page.locator('#approve-button').count()).toBe(1);
      await page.screenshot({ path: join(OUT, 'proposal-discussion.png'), fullPage: true });
      await page.goto(`${base}/transfer`);
      await page.screenshot({ path: join(OUT, 'transfer.png'), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('an owner manages the members from the members page: invite by nickname, change groups, remove; others are refused it', async () => {
    const guest = await signUp(app);
    const guestNick = (await guest.browser.get('/api/agents/me')).body.nickname as string;
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 }, locale: 'en-US', timezoneId: 'UTC' });
    try {
      expect((await context.request.post(`${base}/api/auth/sign-in/email`, { data: { email: owner.email, password: owner.password } })).status()).toBe(200);
      const page = await context.newPage();
      await page.goto(`${base}/w/${slug}`);
      await Promise.all([page.waitForURL(`${base}/w/${slug}/members`), page.locator('#members-link').click()]);
      const row = (id: string) => page.locator(`tr[data-member="${id}"]`);
      expect(await row(trader.agentId).count()).toBe(1);
      expect(await row(owner.agentId).locator('button').count()).toBe(0); // the owner cannot be removed
      // Invite by nickname, into Trader.
      await page.locator('#invite-agentId').fill(guestNick);
      await page.locator('#invite-groupId').selectOption({ label: (await page.locator('#invite-groupId option', { hasText: 'Trader' }).first().innerText()).trim() });
      await Promise.all([page.waitForURL(/done=invite/), page.locator('#invite-button').click()]);
      expect(await row(guest.agentId).innerText()).toContain('Trader');
      const members = async () => (await owner.browser.get('/api/agents').set('X-Workspace-Id', slug)).body as Array<{ id: string; groups: string[] }>;
      expect((await members()).find((m) => m.id === guest.agentId)?.groups).toEqual(['Trader']);
      // Change groups: add the guest to another group, then take them out of Trader.
      const other = (await row(guest.agentId).locator('select option').first().innerText()).split(' (')[0];
      await Promise.all([page.waitForURL(/done=add-group/), row(guest.agentId).getByRole('button', { name: 'Add to group' }).click()]);
      expect((await members()).find((m) => m.id === guest.agentId)?.groups.sort()).toEqual([other, 'Trader'].sort());
      await Promise.all([page.waitForURL(/done=leave-group/), row(guest.agentId).getByRole('button', { name: `Take ${guestNick} out of Trader` }).click()]);
      expect((await members()).find((m) => m.id === guest.agentId)?.groups).toEqual([other]);
      // An unknown nickname is the API's sentence beside the field; nothing changes.
      await page.locator('#invite-agentId').fill('nobody-by-this-name');
      const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.locator('#invite-button').click()]);
      expect(refused.status()).toBe(404);
      await page.locator('#invite p.err[data-code="not_found"]').waitFor();
      expect(await page.locator('#invite-agentId').inputValue()).toBe('nobody-by-this-name');
      // Remove: no longer a member, and the guest may no longer trade there.
      await page.goto(`${base}/w/${slug}/members`);
      await Promise.all([page.waitForURL(/done=remove/), row(guest.agentId).getByRole('button', { name: `Remove ${guestNick} from the workspace` }).click()]);
      expect((await members()).some((m) => m.id === guest.agentId)).toBe(false);
      expect(await row(guest.agentId).count()).toBe(0);
      expect((await guest.browser.get('/api/workspaces/current').set('X-Workspace-Id', slug)).body.capabilities).not.toContain('trade');
      // A trader opening the page reads the API's refusal; a forged removal is refused.
      expect((await trader.browser.get(`/w/${slug}/members`)).status).toBe(403);
      expect((await post(trader, `/w/${slug}/members`, { form: 'remove', back: `/w/${slug}/members`, agentId: owner.agentId })).status).toBe(403);
    } finally {
      await context.close();
    }
  });
});

it('a manager settles a metric early from its page: a confirm box first, then every open book resolves at the value', async () => {
  const created = await owner.browser.post('/api/metrics').set('X-Workspace-Id', slug).send({ name: 'Settled soon', value: 100 });
  expect(created.status).toBe(201);
  const id = created.body.id;
  const books = (await api(owner, `/predictions/markets?metricId=${id}`)).body;
  expect(books.length).toBeGreaterThan(0);
  const traded = await trader.browser.post('/api/predictions/trade').set('X-Workspace-Id', slug).set('Idempotency-Key', uniqueName('settle-trade')).send({ marketId: books[0].id, direction: 'higher', amount: 10 });
  expect(traded.status).toBe(200);
  const path = `/w/${slug}/metrics/${id}`;
  // Drawn for manage only; a trader's forged post is the API's refusal.
  expect(await page(trader, path)).not.toContain('id="settle-form"');
  const forged = await post(trader, path, { form: 'settle', back: path, value: '130', reason: 'mine', confirm: 'yes' });
  expect(forged.status).toBe(403);
  // Without the box ticked: refused beside it, nothing settled, what was typed kept.
  const unticked = await filled(owner, path, 'settle-form', { value: '130', reason: 'Quarter closed early' });
  const refused = await post(owner, path, unticked);
  expect(refused.status).toBe(400);
  expect(refused.text).toContain('id="settle-confirm-err" role="alert"');
  expect(refused.text).toContain('aria-invalid="true" aria-describedby="settle-confirm-err"');
  expect(formOf(refused.text, 'settle-form').get('reason')).toBe('Quarter closed early');
  expect((await api(owner, `/predictions/markets?metricId=${id}`)).body.every((b: { resolved: boolean }) => !b.resolved)).toBe(true);
  // A blank reason is the API's sentence beside the reason.
  const blank = await post(owner, path, await filled(owner, path, 'settle-form', { value: '130', reason: ' ', confirm: 'yes' }));
  expect(blank.status).toBe(400);
  expect(blank.text).toContain('id="settle-reason-err"');
  // Ticked: 303 back with a Done note; every book resolved at the value.
  const sent = await filled(owner, path, 'settle-form', { value: '130', reason: 'Quarter closed early', confirm: 'yes' });
  const res = await post(owner, path, sent);
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe(`${path}?done=settle#settle`);
  expect(await page(owner, res.headers.location)).toContain('data-done="settle"');
  // The list holds open books only: none is left; each book read by its id is resolved at the value (clamped to its range).
  expect((await api(owner, `/predictions/markets?metricId=${id}`)).body).toEqual([]);
  for (const b of books) {
    expect((await api(owner, `/predictions/markets/${b.id}`)).body).toMatchObject({ resolved: true, status: 'resolved', resolvedValue: Math.min(Math.max(130, b.rangeMin), b.rangeMax) });
  }
  expect((await api(owner, `/metrics/${id}`)).body.total).toBe(130);
  // The same form sent again (the back button): refused before the API files the reading again.
  expect(await page(owner, path)).not.toContain('id="settle-form"'); // no open book left: no form
  const again = await post(owner, path, sent);
  expect(again.status).toBe(409);
  expect(again.text).toContain('no open book left to settle');
});
