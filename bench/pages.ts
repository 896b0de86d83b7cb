/**
 * The web pages against their budgets (issue 24): 300 ms of server time to first render (the
 * Server-Timing dur src/web/index.ts sends) and 1500 ms to first contentful paint. The app runs in
 * process on a database of its own, seeded as the browser test seeds it (test/helpers/webWorkspace.ts:
 * metrics with readings, trades on a book, a resting order, a proposal, a private workspace); each
 * page the test opens is opened --runs times in headless Chromium (test/helpers/browser.ts), each
 * time in a fresh browser context (nothing cached), all pages once per round, so the first round
 * is each page's first render. Prints per page the server time and first paint, p50 and max, each
 * as a ratio to its budget, and the scripts the page ran in KB. Not part of npm test.
 *   npx tsx bench/pages.ts [--runs 5]
 */
import type { Page } from 'playwright-core';
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
const SERVER_BUDGET_MS = 300;
const PAINT_BUDGET_MS = 1500;

interface Target {
  name: string;
  path: string;
  status?: number;
  prepare?: (page: Page) => Promise<void>;
}

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
    // A signed-in member with credits: the market page with its trade form.
    const person = await signUp(app);
    const joined = await person.browser.post(`/api/marketplace/${ws.id}/join`);
    if (joined.status !== 200) throw new Error(`join: ${joined.status} ${JSON.stringify(joined.body)}`);
    await mint(app, person.agentId, 500);
    const targets: Target[] = [
      { name: 'workspace', path: `/w/${ws.slug}` },
      { name: 'metric', path: `/w/${ws.slug}/metrics/${revenue.id}` },
      { name: 'market', path: `/w/${ws.slug}/markets/${marketId}` },
      {
        name: 'market (signed in)',
        path: `/w/${ws.slug}/markets/${marketId}`,
        prepare: async (p) => {
          const r = await p.request.post(`${base}/api/auth/sign-in/email`, { data: { email: person.email, password: person.password } });
          if (r.status() !== 200) throw new Error(`sign-in: ${r.status()}`);
        },
      },
      { name: 'proposals', path: `/w/${ws.slug}/proposals` },
      { name: 'proposal', path: `/w/${ws.slug}/proposals/${proposalId}` },
      { name: 'private, refused', path: `/w/${hidden.slug}`, status: 401 },
      { name: 'private, view link', path: `/w/${hidden.slug}?view=${link.body.token}` },
      { name: 'leaderboard', path: '/leaderboard?sort=volume&min=0' },
      { name: 'profile', path: `/participants/${tradingAgent.id}` },
    ];

    const figures = new Map<string, PageFigures[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < RUNS; round++) {
      for (const t of targets) {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
        try {
          await t.prepare?.(page);
          const res = await page.goto(`${base}${t.path}`, { waitUntil: 'load' });
          if (res?.status() !== (t.status ?? 200)) throw new Error(`${t.name} ${t.path}: ${res?.status()}`);
          figures.get(t.name)!.push(await pageFigures(page, res, 10_000)); // a late paint is a figure over budget, not one missing
        } finally {
          await page.close();
        }
      }
    }

    console.log(`# bench/pages: ${targets.length} pages, ${RUNS} opens each in headless Chromium (a fresh context each); budgets ${SERVER_BUDGET_MS} ms server time to first render, ${PAINT_BUDGET_MS} ms to first paint`);
    console.log(`${'page'.padEnd(20)}${'server ms p50/max'.padStart(20)}${'of budget'.padStart(14)}${'first paint ms p50/max'.padStart(25)}${'of budget'.padStart(14)}${'script KB'.padStart(11)}`);
    let worstServer = 0;
    let worstPaint = 0;
    for (const [name, fs] of figures) {
      // A figure not read (no Server-Timing header, no paint seen) is NaN: left out of the stats, it counts as a miss.
      const server = fs.map((f) => f.serverMs).filter(Number.isFinite).sort((a, b) => a - b);
      const paint = fs.map((f) => f.firstPaintMs).filter(Number.isFinite).sort((a, b) => a - b);
      const [s50, sMax, p50, pMax] = [percentile(server, 50), server.at(-1)!, percentile(paint, 50), paint.at(-1)!];
      const kb = Math.max(...fs.map((f) => f.scriptBytes)) / 1024;
      if (!fs.every((f) => Number.isFinite(f.serverMs) && Number.isFinite(f.firstPaintMs))) failures.push(`${name}: a figure was not read`);
      worstServer = Math.max(worstServer, sMax / SERVER_BUDGET_MS);
      worstPaint = Math.max(worstPaint, pMax / PAINT_BUDGET_MS);
      console.log(
        `${name.padEnd(20)}${`${fmt(s50)} / ${fmt(sMax)}`.padStart(20)}${`${fmt(s50 / SERVER_BUDGET_MS, 2)} / ${fmt(sMax / SERVER_BUDGET_MS, 2)}`.padStart(14)}` +
          `${`${fmt(p50, 0)} / ${fmt(pMax, 0)}`.padStart(25)}${`${fmt(p50 / PAINT_BUDGET_MS, 2)} / ${fmt(pMax / PAINT_BUDGET_MS, 2)}`.padStart(14)}${fmt(kb).padStart(11)}`,
      );
    }
    console.log(`worst max against its budget: server time ${fmt(worstServer, 2)} (${worstServer < 1 ? 'met' : 'MISSED'}), first paint ${fmt(worstPaint, 2)} (${worstPaint < 1 ? 'met' : 'MISSED'})`);
    if (worstServer >= 1) failures.push(`server time ${fmt(worstServer, 2)} x its ${SERVER_BUDGET_MS} ms budget`);
    if (worstPaint >= 1) failures.push(`first paint ${fmt(worstPaint, 2)} x its ${PAINT_BUDGET_MS} ms budget`);
  } finally {
    await browser.close();
    await app.close();
    await dropDatabase(DB);
  }
  return failures;
}

runBench(main);
