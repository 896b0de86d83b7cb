/**
 * The web pages against their budgets (issue 59, Deliver 6): 50 ms of server render (the
 * Server-Timing dur src/web/index.ts sends, at p95) and 100 KB of script a page loads. The app runs in
 * process on a database of its own, seeded as the browser test seeds it (test/helpers/webWorkspace.ts:
 * metrics with readings, trades on a book, a resting order, a proposal, a private workspace), plus a
 * signed-in person who joined it and owns a workspace of their own (the acting pages). Each page is
 * opened --runs times in headless Chromium (test/helpers/browser.ts), each time in a fresh browser
 * context (nothing cached; the signed-in ones carry the session cookie), all pages once per round, so
 * the first round is each page's first render. A page reached through a form (a trade quote, a
 * metric's review step) is timed on the form's answer. Prints per page the server render p50 and p95,
 * p95 as a ratio to 50 ms, the first paint p50 (for information), and the script the page loaded in
 * KB as a ratio to 100 KB. Not part of npm test.
 *   npx tsx bench/pages.ts [--runs 5] [--calls: also each page's API calls and their times]
 */
import type { Page, Response } from 'playwright-core';
import { DEFAULT_REDIS_URL } from '../src/config';
import { signUp } from '../test/helpers/accounts';
import { launchChromium, pageFigures, type PageFigures } from '../test/helpers/browser';
import { mint } from '../test/helpers/factories';
import { startTestApp } from '../test/helpers/harness';
import { seedWebWorkspaces } from '../test/helpers/webWorkspace';
import { BENCH_RATE_LIMITS, dropDatabase, fmt, percentile, recreateDatabase, runBench } from './lib';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || def : def;
};
const RUNS = arg('runs', 5);
const DB = 'mpps_bench_pages';
const SERVER_BUDGET_MS = 50;
const SCRIPT_BUDGET_KB = 100;

interface Target {
  name: string;
  path: string;
  status?: number;
  /** Opened with the signed-in person's session cookie. */
  signedIn?: boolean;
  /** After the page loads: send one of its forms; the page timed is the form's answer. */
  then?: (page: Page) => Promise<Response>;
}

/**
 * Click a form's button and wait for the page it leads to: a review's GET after the POST's 303
 * (issue 65: Back never asks to resend), or the POST's own answer (a refusal).
 */
const submit = (page: Page, button: string) =>
  Promise.all([page.waitForResponse((r) => r.request().isNavigationRequest() && r.status() !== 303 && (r.request().method() === 'POST' || r.request().redirectedFrom() !== null)), page.locator(button).click()]).then(async ([res]) => {
    await page.waitForLoadState('load');
    return res;
  });

async function main(): Promise<string[]> {
  const url = await recreateDatabase(DB);
  // The queues on Redis as in the tests (test/helpers/globalSetup.ts), unless QUEUE_BACKEND=postgres.
  const queues: Record<string, string> = process.env.QUEUE_BACKEND === 'postgres' ? {} : { REDIS_URL: process.env.REDIS_URL ?? DEFAULT_REDIS_URL };
  // NODE_ENV test, as under jest: session cookies without Secure, so the signed-in page works over plain http.
  const app = await startTestApp({ DATABASE_URL: url, NODE_ENV: 'test', LOG_LEVEL: 'warn', ...queues, ...BENCH_RATE_LIMITS }, { migrate: true });
  const browser = await launchChromium();
  const failures: string[] = [];
  try {
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const { ws, revenue, marketId, proposalId, tradingAgent, hidden } = await seedWebWorkspaces(app);
    const link = await app.http.get(`/api/workspaces/${hidden.id}/view-link`).set('X-Agent-Key', hidden.owner.key);
    if (link.status !== 200) throw new Error(`view link: ${link.status} ${JSON.stringify(link.body)}`);
    // A signed-in member with credits, who owns a workspace with a metric: the acting pages.
    const person = await signUp(app);
    const joined = await person.browser.post(`/api/marketplace/${ws.id}/join`);
    if (joined.status !== 200) throw new Error(`join: ${joined.status} ${JSON.stringify(joined.body)}`);
    await mint(app, person.agentId, 2_000);
    const comment = await person.browser.post(`/api/proposals/${proposalId}/comments`).set('X-Workspace-Id', ws.slug).send({ body: 'Would this move churn too?' });
    if (comment.status !== 201) throw new Error(`comment: ${comment.status} ${JSON.stringify(comment.body)}`);
    const mine = await person.browser.post('/api/workspaces').send({ name: 'Bench & Co', public: true });
    if (mine.status !== 201) throw new Error(`workspace: ${mine.status} ${JSON.stringify(mine.body)}`);
    const own = await person.browser.post('/api/metrics').set('X-Workspace-Id', mine.body.slug).send({ name: 'Signups', value: 40 });
    if (own.status !== 201) throw new Error(`metric: ${own.status} ${JSON.stringify(own.body)}`);
    // The session once, as a cookie every signed-in context starts with (a sign-in per open would time the account system).
    const signer = await browser.newContext();
    const signedIn = await signer.request.post(`${base}/api/auth/sign-in/email`, { data: { email: person.email, password: person.password } });
    if (signedIn.status() !== 200) throw new Error(`sign-in: ${signedIn.status()}`);
    const session = await signer.storageState();
    await signer.close();
    const market = `/w/${ws.slug}/markets/${marketId}`;
    const targets: Target[] = [
      { name: 'home', path: '/' },
      { name: 'workspace', path: `/w/${ws.slug}` },
      { name: 'workspace (in)', path: `/w/${ws.slug}`, signedIn: true },
      { name: 'metric', path: `/w/${ws.slug}/metrics/${revenue.id}` },
      { name: 'metric (manager)', path: `/w/${mine.body.slug}/metrics/${own.body.id}`, signedIn: true },
      { name: 'market', path: market },
      { name: 'market (in)', path: market, signedIn: true },
      {
        name: 'market quote',
        path: market,
        signedIn: true,
        then: async (p) => {
          await p.locator('#trade-amount').fill('25');
          return submit(p, '#trade-quote-button');
        },
      },
      { name: 'proposals', path: `/w/${ws.slug}/proposals` },
      { name: 'proposal', path: `/w/${ws.slug}/proposals/${proposalId}` },
      { name: 'proposal (in)', path: `/w/${ws.slug}/proposals/${proposalId}`, signedIn: true },
      { name: 'new metric', path: `/w/${mine.body.slug}/metrics/new`, signedIn: true },
      {
        name: 'new metric review',
        path: `/w/${mine.body.slug}/metrics/new`,
        signedIn: true,
        then: async (p) => {
          await p.locator('#metric-name').fill('Revenue');
          await p.locator('#metric-value').fill('500');
          return submit(p, '#metric-review');
        },
      },
      { name: 'new proposal', path: `/w/${ws.slug}/proposals/new`, signedIn: true },
      {
        name: 'new proposal review',
        path: `/w/${ws.slug}/proposals/new`,
        signedIn: true,
        then: async (p) => {
          await p.locator('#proposal-title').fill('Annual plans at a discount');
          await p.locator(`input[name="metricIds"][value="${revenue.id}"]`).check();
          return submit(p, '#proposal-review');
        },
      },
      { name: 'new workspace', path: '/workspaces/new', signedIn: true },
      { name: 'transfer', path: '/transfer', signedIn: true },
      { name: 'private, refused', path: `/w/${hidden.slug}`, status: 401 },
      { name: 'private, view link', path: `/w/${hidden.slug}?view=${link.body.token}` },
      { name: 'leaderboard', path: '/leaderboard?sort=volume&min=0' },
      { name: 'profile', path: `/participants/${tradingAgent.id}` },
    ];

    const figures = new Map<string, PageFigures[]>(targets.map((t) => [t.name, []]));
    // The Server-Timing header of each open: the render, then each API call the page made (src/web/index.ts).
    const calls = new Map<string, string[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < RUNS; round++) {
      for (const t of targets) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC', storageState: t.signedIn ? session : undefined });
        try {
          const page = await context.newPage();
          let res = await page.goto(`${base}${t.path}`, { waitUntil: 'load' });
          if (t.then) res = await t.then(page);
          if (res?.status() !== (t.status ?? 200)) throw new Error(`${t.name} ${t.path}: ${res?.status()}`);
          figures.get(t.name)!.push(await pageFigures(page, res, 10_000)); // a late paint is a slow figure, not one missing
          calls.get(t.name)!.push(res.headers()['server-timing'] ?? '');
        } finally {
          await context.close();
        }
      }
    }

    console.log(`# bench/pages: ${targets.length} pages, ${RUNS} opens each in headless Chromium (a fresh context each); budgets ${SERVER_BUDGET_MS} ms server render at p95, ${SCRIPT_BUDGET_KB} KB of script`);
    console.log(`${'page'.padEnd(22)}${'render ms p50'.padStart(14)}${'p95'.padStart(8)}${'p95/50ms'.padStart(10)}${'paint ms p50'.padStart(14)}${'script KB'.padStart(11)}${'/100KB'.padStart(8)}`);
    let worstServer = 0;
    let worstScript = 0;
    for (const [name, fs] of figures) {
      // A figure not read (no Server-Timing header) is NaN: left out of the stats, it counts as a miss.
      const server = fs.map((f) => f.serverMs).filter(Number.isFinite).sort((a, b) => a - b);
      const paint = fs.map((f) => f.firstPaintMs).filter(Number.isFinite).sort((a, b) => a - b);
      const [s50, s95, p50] = [percentile(server, 50), percentile(server, 95), percentile(paint, 50)];
      const kb = Math.max(...fs.map((f) => f.scriptBytes)) / 1024;
      if (!fs.every((f) => Number.isFinite(f.serverMs))) failures.push(`${name}: the render time was not read`);
      worstServer = Math.max(worstServer, s95 / SERVER_BUDGET_MS);
      worstScript = Math.max(worstScript, kb / SCRIPT_BUDGET_KB);
      console.log(
        `${name.padEnd(22)}${fmt(s50).padStart(14)}${fmt(s95).padStart(8)}${fmt(s95 / SERVER_BUDGET_MS, 2).padStart(10)}${fmt(p50, 0).padStart(14)}${fmt(kb).padStart(11)}${fmt(kb / SCRIPT_BUDGET_KB, 2).padStart(8)}`,
      );
    }
    if (process.argv.includes('--calls')) {
      // Where the render went: the API calls of each page's median open (a page past its budget first).
      console.log('\n# API calls of the median open (route, ms)');
      for (const [name, fs] of figures) {
        const order = fs.map((f, i) => [f.serverMs, i] as const).sort((a, b) => a[0] - b[0]);
        const median = order[Math.floor(order.length / 2)][1];
        const parts = [...calls.get(name)![median].matchAll(/desc="([^"]+)";dur=([\d.]+)/g)].map((m) => `${m[1]} ${m[2]}`);
        console.log(`${name.padEnd(22)}${fmt(fs[median].serverMs).padStart(7)} ms: ${parts.join(' · ') || 'none'}`);
      }
    }
    console.log(`worst against its budget: server render p95 ${fmt(worstServer, 2)} (${worstServer < 1 ? 'met' : 'MISSED'}), script ${fmt(worstScript, 2)} (${worstScript < 1 ? 'met' : 'MISSED'})`);
    if (worstServer >= 1) failures.push(`server render p95 ${fmt(worstServer, 2)} x its ${SERVER_BUDGET_MS} ms budget`);
    if (worstScript >= 1) failures.push(`script ${fmt(worstScript, 2)} x its ${SCRIPT_BUDGET_KB} KB budget`);
  } finally {
    await browser.close();
    await app.close();
    await dropDatabase(DB);
  }
  return failures;
}

runBench(main);
