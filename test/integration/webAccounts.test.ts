import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useMailer, type AccountMail } from '../../src/services/accounts';
import { launchChromium } from '../helpers/browser';
import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { uniqueName, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { signUp } from '../helpers/accounts';
import { connectThroughOAuth } from '../helpers/mcp';

/**
 * Accounts in the browser and finding things (issue 59), in a real headless Chromium over real
 * HTTP: sign-up, sign-in, the header's name and balance, sign-out ending access, a private
 * workspace for its member only, an act without a session going through sign-in and back, a
 * cross-site post refused, the settings page's keys, password reset, account deletion, the home
 * page's public workspaces (most active first) and search, the HTML 404. Screenshots land in
 * test-results/web-accounts/ (ignored by git).
 */
const OUT = join(__dirname, '..', '..', 'test-results', 'web-accounts');

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
// The reset link's way back is built on PUBLIC_BASE_URL: the address this server listens on.
// The sign-in brake per email at 5 attempts (each person here signs in at most twice; the brake test makes five).
useTestApp((a) => (app = a), { PUBLIC_BASE_URL: 'listening', SIGNIN_ATTEMPTS_PER_EMAIL: '5' });

let base: string;
let busy: TestWorkspace;
let quiet: TestWorkspace;
const tag = uniqueName('find');
/** The busy workspace's visible book's traded volume (the hidden one's is not counted). */
let busyVolume: number;
let busyOpenBooks: number;

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  const launching = launchChromium();
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  // Two public workspaces sharing a searchable word: the busy one has trades, the quiet one none.
  quiet = await buildWorkspace(app, { public: true, name: `Quiet ${tag}` });
  busy = await buildWorkspace(app, { public: true, name: `Busy ${tag}` });
  const m = await createMetric(app, busy, { name: 'Revenue', value: 100 });
  const book = (await marketsOf(app, busy, m.id)).find((b) => b.proposalId === null)!;
  const t = await trader(app, busy, 1000);
  expect((await trade(app, busy, t, { marketId: book.id, direction: 'higher', amount: 25 })).status).toBe(200);
  // A metric the Public group hides, traded on: no figure of the public listing counts it.
  const hidden = await createMetric(app, busy, { name: 'Secret', value: 100 });
  const hiddenBook = (await marketsOf(app, busy, hidden.id)).find((b) => b.proposalId === null)!;
  expect((await trade(app, busy, t, { marketId: hiddenBook.id, direction: 'higher', amount: 40 })).status).toBe(200);
  const owner = { 'X-Agent-Key': busy.owner.key, 'X-Workspace-Id': busy.id };
  const pub = (await app.http.get('/api/groups').set(owner)).body.find((g: { name: string }) => g.name === 'Public');
  expect((await app.http.put(`/api/groups/${pub.id}`).set(owner).send({ metricPermissions: { [hidden.id]: { read: false } } })).status).toBe(200);
  busyVolume = (await app.http.get(`/api/predictions/markets/${book.id}`).set('X-Workspace-Id', busy.id)).body.volume;
  busyOpenBooks = (await marketsOf(app, busy, m.id)).filter((b) => b.status === 'open').length;
  browser = await launching;
}, 60_000);

/** A fresh browser (its own cookies) with one page; fails the test on a console or page error. */
async function fresh(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
  contexts.add(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    // A refused page answers 4xx, which the browser logs as a failed resource: that is the point, not an error.
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) errors.push(m.text());
  });
  return { context, page, errors };
}

const snap = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

interface Person {
  name: string;
  email: string;
  password: string;
}
const person = (): Person => {
  const name = uniqueName('person');
  return { name, email: `${name}@example.com`, password: `pw-${name}-secret` };
};

/** Sign up through the page's form; lands on the sign-in page with its note. */
async function signUpInBrowser(page: Page, p: Person, next?: string): Promise<void> {
  await page.goto(`${base}/sign-up${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  await page.fill('#sign-up-name', p.name);
  await page.fill('#sign-up-email', p.email);
  await page.fill('#sign-up-password', p.password);
  const [res] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('form.stack button[type=submit]')]);
  if (res.status() !== 303) throw new Error(`sign-up answered ${res.status()}: ${(await res.text()).replace(/\s+/g, ' ').slice(0, 2000)}`);
  await page.waitForURL(/\/sign-in\?signed-up=1/);
}

/** Sign in through the page's form (the page is on /sign-in already, or is sent there). */
async function signInInBrowser(page: Page, p: Person, password = p.password): Promise<void> {
  if (!new URL(page.url()).pathname.startsWith('/sign-in')) await page.goto(`${base}/sign-in`);
  await page.fill('#sign-in-email', p.email);
  await page.fill('#sign-in-password', password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/sign-in')), page.click('form.stack button[type=submit]')]);
}

it('sign up, sign in: the header names the person with their balance (what GET /api/agents/me answers) and a menu', async () => {
  const p = person();
  const { context, page, errors } = await fresh();
  await signUpInBrowser(page, p);
  expect(await page.locator('p.note').innerText()).toContain('sign in');
  await snap(page, 'sign-in-after-sign-up');
  await signInInBrowser(page, p);
  expect(new URL(page.url()).pathname).toBe('/');
  const me = await context.request.get(`${base}/api/agents/me`);
  expect(me.status()).toBe(200);
  const body = (await me.json()) as { id: string; name: string; balance: number };
  expect(await page.locator('[data-field="me-name"]').innerText()).toBe(body.name);
  expect(await page.locator('[data-field="me-balance"]').getAttribute('data-value')).toBe(String(body.balance));
  // The menu opens without script (a <details>) and links the profile, settings and a sign-out form.
  await page.click('details.menu summary');
  expect(await page.locator(`details.menu a[href="/participants/${body.id}"]`).count()).toBe(1);
  expect(await page.locator('details.menu a[href="/settings"]').count()).toBe(1);
  expect(await page.locator('details.menu form[action="/sign-out"][method="post"]').count()).toBe(1);
  await snap(page, 'header-signed-in');
  await page.setViewportSize({ width: 390, height: 844 });
  await snap(page, 'header-signed-in-phone');
  // A wrong password: the sentence beside the password field, marked invalid, nothing set.
  const other = await fresh();
  await other.page.goto(`${base}/sign-in`);
  await other.page.fill('#sign-in-email', p.email);
  await other.page.fill('#sign-in-password', 'not-the-password');
  const [refused] = await Promise.all([other.page.waitForResponse((r) => r.request().method() === 'POST'), other.page.click('form.stack button[type=submit]')]);
  expect(refused.status()).toBe(401);
  expect(await other.page.locator('#sign-in-password').getAttribute('aria-invalid')).toBe('true');
  expect(await other.page.locator('#sign-in-password-err').innerText()).toBe('Wrong email or password.');
  expect(await other.page.locator('#sign-in-email').inputValue()).toBe(p.email);
  await snap(other.page, 'sign-in-refused');
  expect(errors).toEqual([]);
});

it('a private workspace opens for its member through the session, and for no one else; sign-out ends access', async () => {
  const member = person();
  const stranger = person();
  const a = await fresh();
  await signUpInBrowser(a.page, member);
  await signInInBrowser(a.page, member);
  const created = await a.context.request.post(`${base}/api/workspaces`, { data: { name: `Hidden ${uniqueName('ws')}`, public: false } });
  expect(created.status()).toBe(201);
  const ws = (await created.json()) as { slug: string; name: string };

  const open = await a.page.goto(`${base}/w/${ws.slug}`);
  expect(open?.status()).toBe(200);
  expect(await a.page.locator('h1').innerText()).toBe(ws.name);
  // Home lists it first, among the member's own, marked private.
  await a.page.goto(`${base}/`);
  expect(await a.page.locator(`#yours li[data-workspace="${ws.slug}"]`).innerText()).toContain('private');
  await snap(a.page, 'home-signed-in');

  // Not signed in: refused, with a way to sign in and come back.
  const anon = await fresh();
  const refused = await anon.page.goto(`${base}/w/${ws.slug}`);
  expect(refused?.status()).toBe(401);
  expect(await anon.page.locator('h1').innerText()).not.toBe(ws.name);
  expect(await anon.page.locator(`header a[href="/sign-in?next=${encodeURIComponent(`/w/${ws.slug}`)}"]`).count()).toBe(1);
  expect(await anon.page.content()).not.toContain(ws.name);

  // Signed in as someone else: refused too.
  const b = await fresh();
  await signUpInBrowser(b.page, stranger);
  await signInInBrowser(b.page, stranger);
  const other = await b.page.goto(`${base}/w/${ws.slug}`);
  expect([403, 404]).toContain(other?.status());
  expect(await b.page.content()).not.toContain(ws.name);

  // Sign out from the header's menu: the cookie is gone and so is access; the old cookie opens nothing either.
  const cookie = (await a.context.cookies()).find((c) => c.name.endsWith('session_token'))!;
  expect(cookie).toBeDefined();
  await a.page.goto(`${base}/w/${ws.slug}`);
  await a.page.click('details.menu summary');
  await Promise.all([a.page.waitForURL(`${base}/`), a.page.click('details.menu button:has-text("Sign out")')]);
  expect(await a.page.locator('header a[href="/sign-in"]').count()).toBe(1);
  expect((await a.context.cookies()).some((c) => c.name.endsWith('session_token'))).toBe(false);
  expect((await a.page.goto(`${base}/w/${ws.slug}`))?.status()).toBe(401);
  const replay = await request(app.server).get(`/w/${ws.slug}`).set('Cookie', `${cookie.name}=${cookie.value}`);
  expect(replay.status).toBe(401);
  expect(replay.text).not.toContain(ws.name);
  // An ended session is no one: a public page draws as for a visitor not signed in, and the cookie is cleared.
  const home = await request(app.server).get('/').set('Cookie', `${cookie.name}=${cookie.value}`);
  expect(home.status).toBe(200);
  expect(home.text).toContain('href="/sign-in"');
  expect(String(home.headers['set-cookie'])).toContain(`${cookie.name}=; Path=/; Max-Age=0`);
  const api = await request(app.server).get('/api/agents/me').set('Cookie', `${cookie.name}=${cookie.value}`);
  expect(api.status).toBe(401);
});

it('an act without a session goes to sign-in and back; settings mint a key shown once and revoke it', async () => {
  const p = person();
  const { context, page, errors } = await fresh();
  // The settings page itself sends a visitor without a session to sign in, and back.
  expect((await page.goto(`${base}/settings`))?.url()).toBe(`${base}/sign-in?next=${encodeURIComponent('/settings')}`);
  await signUpInBrowser(page, p, '/settings');
  await signInInBrowser(page, p);
  expect(new URL(page.url()).pathname).toBe('/settings');
  await snap(page, 'settings');

  // The session ends while the form is open: posting it leads to sign-in, then back to the page.
  await context.clearCookies();
  await page.fill('form:has(input[name=form][value=mint-key]) input[name=label]', 'ci');
  await Promise.all([page.waitForURL(/\/sign-in\?next=/), page.click('form:has(input[name=form][value=mint-key]) button[type=submit]')]);
  expect(new URL(page.url()).searchParams.get('next')).toBe('/settings#keys');
  await signInInBrowser(page, p);
  expect(new URL(page.url()).pathname).toBe('/settings');

  // Mint: the key is on the answer, once; it works; the list shows its row; revoke ends it.
  await page.fill('form:has(input[name=form][value=mint-key]) input[name=label]', 'ci');
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('form:has(input[name=form][value=mint-key]) button[type=submit]')]);
  const key = (await page.locator('[data-field="minted-key"]').innerText()).trim();
  expect(key.length).toBeGreaterThan(20);
  expect((await request(app.server).get('/api/agents/me').set('X-Agent-Key', key)).status).toBe(200);
  await page.goto(`${base}/settings`);
  expect(await page.locator('[data-field="minted-key"]').count()).toBe(0);
  expect(await page.content()).not.toContain(key);
  const rows = page.locator('tr[data-key]');
  expect(await rows.count()).toBe(1);
  await snap(page, 'settings-key');
  await Promise.all([page.waitForURL(/\/settings/), rows.first().locator('button').click()]);
  expect(await page.locator('tr[data-key]').count()).toBe(0);
  expect((await request(app.server).get('/api/agents/me').set('X-Agent-Key', key)).status).toBe(401);

  // A mint with no scope ticked: the API's sentence beside the scopes, nothing minted.
  for (const box of await page.locator('form:has(input[name=form][value=mint-key]) input[name=scopes]').all()) await box.uncheck();
  const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('form:has(input[name=form][value=mint-key]) button[type=submit]')]);
  expect(refused.status()).toBe(400);
  expect(await page.locator('#mint-key-scopes-err').innerText()).toMatch(/scope/);
  expect(await page.locator('tr[data-key]').count()).toBe(0);
  expect(errors).toEqual([]);
});

it('a cross-site post is refused before anything is read or done', async () => {
  const p = person();
  const { context, page } = await fresh();
  await signUpInBrowser(page, p);
  await signInInBrowser(page, p);
  const cookie = (await context.cookies()).find((c) => c.name.endsWith('session_token'))!;
  const form = 'form=mint-key&back=%2Fsettings&idem=abcdef123456&label=evil&scopes=workspace%3Aread';
  const evil = await request(app.server).post('/settings').set('Cookie', `${cookie.name}=${cookie.value}`).set('Origin', 'https://evil.example').type('form').send(form);
  expect(evil.status).toBe(403);
  expect(evil.headers['content-type']).toMatch(/text\/html/);
  expect(evil.text).toContain('own pages');
  const fetched = await request(app.server).post('/settings').set('Cookie', `${cookie.name}=${cookie.value}`).set('Sec-Fetch-Site', 'cross-site').type('form').send(form);
  expect(fetched.status).toBe(403);
  const keys = await request(app.server).get('/api/agents/me/keys').set('Cookie', `${cookie.name}=${cookie.value}`);
  expect(keys.status).toBe(200);
  expect(keys.body).toEqual([]);
  // Sign-in and sign-out refuse a cross-site post too (no session is set, none is ended).
  const signIn = await request(app.server).post('/sign-in').set('Origin', 'https://evil.example').type('form').send(`form=sign-in&email=${encodeURIComponent(p.email)}&password=${encodeURIComponent(p.password)}`);
  expect(signIn.status).toBe(403);
  expect(signIn.headers['set-cookie']).toBeUndefined();
  const signOut = await request(app.server).post('/sign-out').set('Cookie', `${cookie.name}=${cookie.value}`).set('Origin', 'https://evil.example').type('form').send('back=%2F');
  expect(signOut.status).toBe(403);
  expect((await request(app.server).get('/api/agents/me').set('Cookie', `${cookie.name}=${cookie.value}`)).status).toBe(200);
});

it('home lists public workspaces most active first, without a session; search by name filters', async () => {
  const { page, errors } = await fresh();
  expect((await page.goto(`${base}/`))?.status()).toBe(200);
  const slugs = await page.locator('#public li[data-workspace]').evaluateAll((els) => els.map((e) => e.getAttribute('data-workspace')));
  expect(slugs).toContain(busy.slug);
  expect(slugs).toContain(quiet.slug);
  expect(slugs.indexOf(busy.slug)).toBeLessThan(slugs.indexOf(quiet.slug));
  const row = page.locator(`#public li[data-workspace="${busy.slug}"]`);
  expect(await row.locator('[data-field="metrics"]').getAttribute('data-value')).toBe('1');
  expect(Number(await row.locator('[data-field="volume"]').getAttribute('data-value'))).toBeGreaterThan(0);
  // The figures are the API's, for anyone.
  const listed = await request(app.server).get('/api/marketplace/workspaces/public').query({ q: tag });
  expect(listed.status).toBe(200);
  expect(listed.body.map((w: { slug: string }) => w.slug)).toEqual([busy.slug, quiet.slug]);
  expect(busyVolume).toBeGreaterThan(0);
  expect(listed.body[0].activity).toMatchObject({ metrics: 1, openProposals: 0, openBooks: busyOpenBooks, volume: busyVolume });
  expect(listed.body[1].activity).toMatchObject({ metrics: 0, openProposals: 0, volume: 0, lastTradeAt: null });
  await snap(page, 'home');
  // Search: by the form, without script.
  await page.fill('#q', `quiet ${tag}`);
  await Promise.all([page.waitForURL(/\?q=/), page.click('form[role=search] button')]);
  expect(await page.locator('#public li[data-workspace]').evaluateAll((els) => els.map((e) => e.getAttribute('data-workspace')))).toEqual([quiet.slug]);
  // A LIKE wildcard is a plain character: it matches nothing here.
  await page.goto(`${base}/?q=${encodeURIComponent(`%${tag}_`)}`);
  expect(await page.locator('#public li[data-workspace]').count()).toBe(0);
  expect(await page.locator('#public').innerText()).toContain('No public workspace matches');
  expect(errors).toEqual([]);
});

it('a public workspace made after the ranking was kept is listed on the next home page, not one TTL later', async () => {
  const config = app.deps.config as { PLATFORM_TOTALS_TTL_MS: number };
  config.PLATFORM_TOTALS_TTL_MS = 600_000;
  try {
    const { page, errors } = await fresh();
    await page.goto(`${base}/`); // the ranking is computed and kept now
    const late = await buildWorkspace(app, { public: true, name: `Late ${tag}` });
    await page.goto(`${base}/`);
    const slugs = await page.locator('#public li[data-workspace]').evaluateAll((els) => els.map((e) => e.getAttribute('data-workspace')));
    expect(slugs).toContain(late.slug);
    expect(slugs.indexOf(busy.slug)).toBeLessThan(slugs.indexOf(late.slug)); // ranked after the active ones
    expect(errors).toEqual([]);
  } finally {
    config.PLATFORM_TOTALS_TTL_MS = 0;
  }
});

it('an unknown page address is an HTML 404 in the layout; an unknown API path keeps its JSON 404', async () => {
  const { page } = await fresh();
  const res = await page.goto(`${base}/no/such/page`);
  expect(res?.status()).toBe(404);
  expect(res?.headers()['content-type']).toMatch(/text\/html/);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  expect(await page.locator('h1').innerText()).toBe('Page not found');
  expect(await page.locator('header a[href="/sign-in?next=%2Fno%2Fsuch%2Fpage"]').count()).toBe(1);
  await snap(page, 'not-found');
  const api = await request(app.server).get('/api/no-such-route').set('Accept', 'text/html');
  expect(api.status).toBe(404);
  expect(api.headers['content-type']).toMatch(/json/);
  const json = await request(app.server).get('/no/such/page').set('Accept', 'application/json');
  expect(json.status).toBe(404);
  expect(json.headers['content-type'] ?? '').not.toMatch(/html/);
});

it('password reset by email: the mailed link opens the page to choose a new password; the old one stops working', async () => {
  const p = person();
  const mails: AccountMail[] = [];
  const prior = useMailer(async (m) => {
    mails.push(m);
  });
  try {
    const { page } = await fresh();
    await signUpInBrowser(page, p);
    await page.goto(`${base}/reset-password`);
    await page.fill('#reset-request-email', p.email);
    await Promise.all([page.waitForURL(/sent=1/), page.click('form.stack button[type=submit]')]);
    expect(await page.locator('p.note').innerText()).toContain('on its way');
    expect(mails).toHaveLength(1);
    // The link is the account system's check under this server, which comes back to the page with the token.
    expect(mails[0].data.url.startsWith(`${base}/api/auth/reset-password/`)).toBe(true);
    await page.goto(mails[0].data.url);
    expect(new URL(page.url()).pathname).toBe('/reset-password');
    expect(new URL(page.url()).searchParams.get('token')).toBe(mails[0].data.token);
    // Too short: the sentence beside the field.
    await page.fill('#reset-set-password', 'short');
    const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('form.stack button[type=submit]')]);
    expect(refused.status()).toBe(400);
    expect(await page.locator('#reset-set-password').getAttribute('aria-invalid')).toBe('true');
    await page.fill('#reset-set-password', `${p.password}-new`);
    await Promise.all([page.waitForURL(/\/sign-in\?reset=1/), page.click('form.stack button[type=submit]')]);
    await signInInBrowser(page, p, `${p.password}-new`);
    expect(await page.locator('[data-field="me-name"]').count()).toBe(1);
    const old = await request(app.server).post('/api/auth/sign-in/email').send({ email: p.email, password: p.password });
    expect(old.status).toBe(401);
    // A request naming no page to come back to (the JSON route) is mailed a link to the page itself.
    await request(app.server).post('/api/auth/request-password-reset').send({ email: p.email });
    expect(mails).toHaveLength(2);
    expect(mails[1].data.url).toMatch(/\/reset-password\?token=/);
  } finally {
    useMailer(prior);
  }
});

it('delete the account from settings: confirmed by typing the name; the session and the cookie go', async () => {
  const p = person();
  const { context, page } = await fresh();
  await signUpInBrowser(page, p);
  await signInInBrowser(page, p);
  await page.goto(`${base}/settings`);
  const name = await page.locator('[data-field="me-name"]').innerText();
  await page.fill('form:has(input[name=form][value=delete-account]) input[name=confirm]', 'someone else');
  const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('form:has(input[name=form][value=delete-account]) button[type=submit]')]);
  expect(refused.status()).toBe(400);
  expect(await page.locator('#delete-account-confirm-err').innerText()).toContain(name);
  expect(await page.locator('form:has(input[name=form][value=delete-account]) input[name=confirm]').getAttribute('aria-invalid')).toBe('true');
  const cookie = (await context.cookies()).find((c) => c.name.endsWith('session_token'))!;
  await page.fill('form:has(input[name=form][value=delete-account]) input[name=confirm]', name);
  await Promise.all([page.waitForURL(`${base}/`), page.click('form:has(input[name=form][value=delete-account]) button[type=submit]')]);
  expect(await page.locator('header a[href="/sign-in"]').count()).toBe(1);
  expect((await context.cookies()).some((c) => c.name.endsWith('session_token'))).toBe(false);
  expect((await request(app.server).get('/api/agents/me').set('Cookie', `${cookie.name}=${cookie.value}`)).status).toBe(401);
  expect((await request(app.server).post('/api/auth/sign-in/email').send({ email: p.email, password: p.password })).status).toBe(401);
});

it('settings list the connected assistants: the ask switches save, disconnect ends the connection', async () => {
  // An assistant connected through the real OAuth flow (sign-up and sign-in through the JSON routes here).
  const p = await signUp(app, uniqueName('person'));
  const { client } = await connectThroughOAuth(app, p);
  try {
    const { page, errors } = await fresh();
    await page.goto(`${base}/sign-in?next=${encodeURIComponent('/settings')}`);
    await signInInBrowser(page, { name: '', email: p.email, password: p.password });
    expect(new URL(page.url()).pathname).toBe('/settings');
    const [conn] = (await p.browser.get('/api/connections')).body as Array<{ id: string; ask: Record<string, boolean> }>;
    expect(conn.ask.trade).toBe(true);
    const row = page.locator(`li[data-connection="${conn.id}"]`);
    expect(await row.locator('strong').innerText()).toBe('Test Assistant');
    await snap(page, 'settings-connection');
    // Untick "trade": saved through PUT /connections/{id}/ask, every other switch as it was.
    await row.locator('input[name=ask][value=trade]').uncheck();
    await Promise.all([page.waitForURL(/\/settings/), row.locator('button:has-text("Save")').click()]);
    const [after] = (await p.browser.get('/api/connections')).body as Array<{ ask: Record<string, boolean> }>;
    expect(after.ask).toEqual({ ...conn.ask, trade: false });
    expect(await page.locator(`li[data-connection="${conn.id}"] input[name=ask][value=trade]`).isChecked()).toBe(false);
    // Disconnect: the connection is gone from the page and from the API.
    await Promise.all([page.waitForURL(/\/settings/), page.locator(`li[data-connection="${conn.id}"] button:has-text("Disconnect")`).click()]);
    expect(await page.locator('li[data-connection]').count()).toBe(0);
    expect((await p.browser.get('/api/connections')).body).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await client.close();
  }
});

it('the sign-in page keeps the brake per email: past the limit even the right password is refused, with a sentence', async () => {
  const p = await signUp(app, uniqueName('person'));
  const post = (password: string) => request(app.server).post('/sign-in').type('form').send(`form=sign-in&next=%2F&email=${encodeURIComponent(p.email)}&password=${encodeURIComponent(password)}`);
  const limit = app.deps.config.SIGNIN_ATTEMPTS_PER_EMAIL;
  // signUp signed in once already (the JSON route, the same bucket).
  for (let i = 1; i < limit; i++) expect((await post('wrong-password')).status).toBe(401);
  const braked = await post(p.password);
  expect(braked.status).toBe(429);
  expect(braked.headers['content-type']).toMatch(/text\/html/);
  expect(braked.text).toMatch(/data-code="rate_limited"/);
  expect(braked.headers['set-cookie']).toBeUndefined();
});
