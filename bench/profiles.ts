/**
 * Profiles and the leaderboard at scale (issue 23): 1,000 participants, 1,000,000 trades, 20,000
 * resolved books (plus open ones), seeded in SQL into a database of its own; the standings of the
 * resolved books come from the migration's backfill. Figures: GET /agents/{id}/public and
 * GET /leaderboard p95 through the real app (target < 50 ms each), and the share of a resolution
 * pass (resolveLockedMarket per book, in its own transaction, then the standings job enqueued) spent
 * on the standings (target < 5%), and the standings job's own cost per book. Not part of npm test.
 * BENCH_DB names the database (default mpps_bench_profiles).
 *   npx tsx bench/profiles.ts [--agents 1000] [--trades 1000000] [--books 20000] [--open 400] [--requests 300]
 */
import type { Server } from 'node:http';
import { backfillStandings } from '../migrations/1763802300000-Standings';
import { createApp } from '../src/doors';
import { loadConfig } from '../src/config';
import { inTransaction } from '../src/db/tx';
import { lockMarket } from '../src/services/books';
import { enqueueStandings, resolveLockedMarket } from '../src/services/lifecycle';
import { clearStandingsCache, markStandingsPending, recordPendingStandings, sweepPendingStandings } from '../src/services/standings';
import { bootDeps, closeDeps } from '../src/runtime';
import { dropDatabase, recreateDatabase, runBench } from './lib';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || def : def;
};
const AGENTS = arg('agents', 1000);
const TRADES = arg('trades', 1_000_000);
const BOOKS = arg('books', 20_000);
const OPEN = arg('open', 400);
const REQUESTS = arg('requests', 300);
const WORKSPACES = 10;
const METRICS_PER_WS = 5;
const DB = process.env.BENCH_DB ?? 'mpps_bench_profiles';

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
}
const fmt = (st: ReturnType<typeof stats>) => `p50 ${st.p50.toFixed(1)} ms  p95 ${st.p95.toFixed(1)} ms  max ${st.max.toFixed(1)} ms  mean ${st.mean.toFixed(1)} ms`;

async function main(): Promise<string[]> {
  const url = await recreateDatabase(DB);
  const config = loadConfig({ ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', SCHEDULER: 'false', RATE_LIMIT_KEY_PER_MINUTE: '1000000', QUEUE_PREFIX: `benchprofiles${Date.now()}` });
  const deps = await bootDeps(config, { migrate: true, poolSize: 4 });
  const server: Server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
  const failures: string[] = [];
  const q = (sql: string, params: unknown[] = []) => deps.ds.query(sql, params);
  try {
    console.log(`# bench/profiles: ${AGENTS} participants, ${TRADES} trades, ${BOOKS} resolved + ${OPEN} open books in ${WORKSPACES} public workspaces`);
    let t0 = performance.now();
    await q(`INSERT INTO agents (id, nickname) SELECT 'bench-owner', 'bench-owner'`);
    await q(`INSERT INTO agents (id, nickname) SELECT 'b' || i, 'bench-' || i FROM generate_series(1, $1) i`, [AGENTS]);
    await q(`INSERT INTO accounts (id, kind, balance) SELECT 'agent:' || id, 'participant', 1000000000000 FROM agents`);
    await q(
      `INSERT INTO workspaces (slug, name, public, owner_id, default_liquidity, default_proposal_liquidity)
       SELECT 'bench-ws-' || i, 'Bench ' || i, true, 'bench-owner', 100000000000, 100000000000 FROM generate_series(1, $1) i`,
      [WORKSPACES],
    );
    await q(`INSERT INTO metrics (workspace_id, name, sort_order) SELECT w.id, 'm' || k, k FROM workspaces w, generate_series(1, $1) k`, [METRICS_PER_WS]);
    // Books: the first BOOKS resolved over 2026, then OPEN open ones; p(higher) of each from its q's (b = 144.27 credits).
    await q(
      `INSERT INTO markets (workspace_id, metric_id, target_date, granularity, resolves_on, range_min, range_max, status, funded, liquidity, b, q_higher, q_lower,
                            resolved_value, resolved_at, created_at, trade_count, volume)
       SELECT mt.workspace_id, mt.id, 'bench-' || i, 'day', '2026-12-31', 0, 1000, CASE WHEN i <= $1::int THEN 'resolved' ELSE 'open' END, true,
              100000000000, 144269504088, (abs(hashint4(i)) % 200)::bigint * 1000000000, (abs(hashint4(i + 7)) % 200)::bigint * 1000000000,
              CASE WHEN i <= $1::int THEN (abs(hashint4(i * 3)) % 1200)::float8 END,
              CASE WHEN i <= $1::int THEN timestamptz '2026-01-01' + (i::float8 / $1::int) * interval '330 days' END,
              timestamptz '2025-12-01' + (i::float8 / ($1::int + $2::int)) * interval '330 days', 0, 0
         FROM generate_series(1, $1::int + $2::int) i
         JOIN LATERAL (SELECT id, workspace_id FROM metrics ORDER BY id OFFSET (i % ($3::int * $4::int)) LIMIT 1) mt ON true`,
      [BOOKS, OPEN, WORKSPACES, METRICS_PER_WS],
    );
    await q(`CREATE TEMP TABLE bench_books AS SELECT id, workspace_id, row_number() OVER (ORDER BY target_date) AS n FROM markets`);
    await q(`CREATE INDEX ON bench_books (n)`);
    await q(
      `INSERT INTO trades (market_id, workspace_id, agent_id, kind, direction, shares, cost, probability_before, probability_after, consensus_before, consensus_after, created_at)
       SELECT bb.id, bb.workspace_id, 'b' || (1 + abs(hashint4(g * 13)) % $2::int), 'buy', CASE WHEN g % 2 = 0 THEN 'higher' ELSE 'lower' END,
              (1 + abs(hashint4(g)) % 20)::bigint * 1000000000, (1 + abs(hashint4(g)) % 20)::bigint * 500000000,
              0.5, x.p, 500, x.p * 1000, timestamptz '2025-12-01' + (g::float8 / $1::int) * interval '360 days'
         FROM generate_series(1, $1::int) g
         JOIN bench_books bb ON bb.n = 1 + (g % ($3::int + $4::int))
         CROSS JOIN LATERAL (SELECT 0.01 + (abs(hashint4(g * 7)) % 98) / 100.0 AS p) x`,
      [TRADES, AGENTS, BOOKS, OPEN],
    );
    await q(
      `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost, payout)
       SELECT t.market_id, t.agent_id, t.workspace_id, coalesce(sum(t.shares) FILTER (WHERE t.direction = 'higher'), 0), coalesce(sum(t.shares) FILTER (WHERE t.direction = 'lower'), 0), sum(t.cost), NULL
         FROM trades t GROUP BY t.market_id, t.agent_id, t.workspace_id`,
    );
    await q(
      `UPDATE positions p SET payout = floor(p.shares_higher * least(1, mk.resolved_value / 1000) + p.shares_lower * (1 - least(1, mk.resolved_value / 1000)))::bigint
         FROM markets mk WHERE mk.id = p.market_id AND mk.status = 'resolved'`,
    );
    await q(`INSERT INTO accounts (id, kind, balance) SELECT 'pool:' || id, 'pool', 100000000000000 FROM markets WHERE status = 'open'`);
    console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    t0 = performance.now();
    await backfillStandings(deps.ds);
    console.log(`standings backfilled (migration path) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await q(`VACUUM ANALYZE`);
    const [{ n: results }] = await q(`SELECT count(*)::int AS n FROM participant_results`);
    const [{ n: statRows }] = await q(`SELECT count(*)::int AS n FROM participant_stats`);
    console.log(`participant_results ${results} rows, participant_stats ${statRows} rows`);

    const get = async (path: string) => {
      const s = performance.now();
      const r = await fetch(`${base}${path}`);
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      await r.json();
      return performance.now() - s;
    };
    for (let i = 0; i < 20; i++) await get(`/agents/b${1 + i}/public`); // warm-up
    const profile: number[] = [];
    for (let i = 0; i < REQUESTS; i++) profile.push(await get(`/agents/b${1 + ((i * 7919) % AGENTS)}/public`));
    const ps = stats(profile);
    console.log(`GET /agents/{id}/public   ${fmt(ps)}  (${REQUESTS} requests)`);
    if (ps.p95 >= 50) failures.push(`profile p95 ${ps.p95.toFixed(1)} ms >= 50 ms`);

    const [ws] = await q(`SELECT id FROM workspaces ORDER BY slug LIMIT 1`);
    const [mt] = await q(`SELECT id FROM metrics WHERE workspace_id = $1 LIMIT 1`, [ws.id]);
    const boards = ['sort=earnings', 'sort=calibration', 'sort=accuracy', 'sort=volume', `workspaceId=${ws.id}`, `metricId=${mt.id}&sort=calibration`, 'minResolvedMarkets=50&offset=100'];
    for (const b of boards) await get(`/leaderboard?${b}`);
    const board: number[] = [];
    for (let i = 0; i < REQUESTS; i++) board.push(await get(`/leaderboard?${boards[i % boards.length]}`));
    const bs = stats(board);
    console.log(`GET /leaderboard          ${fmt(bs)}  (${REQUESTS} requests over ${boards.length} query shapes; a board is reused until a book resolves, at most 5 s)`);
    if (bs.p95 >= 50) failures.push(`leaderboard p95 ${bs.p95.toFixed(1)} ms >= 50 ms`);
    // The uncached path: every request computes its board (what the first request after a resolution pays).
    const cold: number[] = [];
    for (let i = 0; i < Math.min(REQUESTS, 70); i++) {
      clearStandingsCache(deps.ds);
      cold.push(await get(`/leaderboard?${boards[i % boards.length]}`));
    }
    console.log(`GET /leaderboard, uncached ${fmt(stats(cold))}  (${cold.length} requests)`);
    const coldProfile: number[] = [];
    for (let i = 0; i < Math.min(REQUESTS, 70); i++) {
      clearStandingsCache(deps.ds);
      coldProfile.push(await get(`/agents/b${1 + ((i * 31) % AGENTS)}/public`));
    }
    console.log(`GET /agents/{id}/public, rank uncached ${fmt(stats(coldProfile))}  (${coldProfile.length} requests)`);

    // The resolution pass, as a lane's settle job runs it: each open book resolved in its own transaction,
    // then its standings job enqueued after commit (enqueueStandings: not awaited, coalesced while one
    // enqueue is in flight). The pass's standings share = the pending mark (a CTE on the book's status
    // UPDATE: its marginal cost is measured below) + the enqueue call; the background enqueues run
    // during the pass, so its wall time includes them.
    let inEnqueue = 0;
    const open: Array<{ id: string }> = await q(`SELECT id FROM markets WHERE status = 'open' ORDER BY id`);
    const now = new Date('2026-12-15T00:00:00Z');
    t0 = performance.now();
    for (const [i, b] of open.entries()) {
      await inTransaction(deps.ds, async (m) => {
        const mk = (await lockMarket(m, b.id))!;
        await resolveLockedMarket(m, mk, (i * 37) % 1000, now);
      });
      const s = performance.now();
      void enqueueStandings(deps, [b.id]);
      inEnqueue += performance.now() - s;
    }
    const pass = performance.now() - t0;
    const passPerBook = pass / Math.max(1, open.length);
    t0 = performance.now();
    await enqueueStandings(deps, []);
    const jobCounts = await deps.hub.queue(deps.hub.queueFor('standings')).getJobCounts('waiting', 'prioritized', 'active', 'completed', 'failed');
    const flush = performance.now() - t0;
    const holders = open.length ? (await q(`SELECT count(*)::int AS n FROM positions WHERE market_id = ANY($1)`, [open.map((o) => o.id)]))[0].n : 0;
    console.log(
      `resolution pass: ${open.length} books (${holders} holders, ~${Math.round(TRADES / (BOOKS + OPEN))} trades each) in ${pass.toFixed(0)} ms (${passPerBook.toFixed(2)} ms/book); ` +
        `enqueue calls ${inEnqueue.toFixed(1)} ms; standings jobs on the queue after it: ${JSON.stringify(jobCounts)} (the last enqueue done ${flush.toFixed(0)} ms after the pass)`,
    );
    await deps.hub.queue(deps.hub.queueFor('standings')).obliterate({ force: true }); // no worker here: the job's work is run and timed below

    // The standings job's own cost, outside the pass: half the books one per transaction (a settle's
    // job), the other half by the sweep (STANDINGS_BATCH books per transaction).
    const half = open.slice(0, Math.ceil(open.length / 2));
    t0 = performance.now();
    let added = 0;
    for (const b of half) added += (await recordPendingStandings(deps, [b.id])).holders;
    const single = performance.now() - t0;
    t0 = performance.now();
    const swept = await sweepPendingStandings(deps);
    const batched = performance.now() - t0;
    console.log(
      `standings job: ${half.length} books one per job in ${single.toFixed(0)} ms (${(single / Math.max(1, half.length)).toFixed(2)} ms/book, ${(100 * single / Math.max(1, half.length) / (pass / open.length)).toFixed(0)}% of a book's pass); ` +
        `${swept.books} by the sweep in ${batched.toFixed(0)} ms (${(batched / Math.max(1, swept.books)).toFixed(2)} ms/book); ${added + swept.holders} holder rows`,
    );
    if (added + swept.holders !== holders) failures.push(`standings job added ${added + swept.holders} holder rows, ${holders} expected`);
    const [{ n: left }] = await q(`SELECT count(*)::int AS n FROM standings_pending`);
    if (left) failures.push(`${left} books still pending`);

    // The mark's marginal cost inside the pass: the book's status UPDATE with and without the mark's
    // CTE, alternated on one connection, each in a transaction rolled back (the pending table empty again).
    const plain = `UPDATE markets SET status = 'resolved', resolved_value = $2, resolved_at = $3, settled_early = $4, updated_at = $3 WHERE id = $1`;
    const runner = deps.ds.createQueryRunner();
    await runner.connect();
    const timed = { plain: 0, marked: 0, rowsOnly: 0 };
    try {
      // Option (a)'s floor, for the record: what the pass would pay to keep only the per-holder results
      // rows in it (no scoring, no running sums), timed in rolled-back transactions.
      for (const b of open) {
        const mk = (await lockMarket(runner.manager, b.id))!;
        await runner.startTransaction();
        await runner.query(`DELETE FROM participant_results WHERE market_id = $1`, [b.id]);
        const s = performance.now();
        await runner.query(
          `INSERT INTO participant_results (agent_id, market_id, workspace_id, metric_id, resolved_at, trades, volume, settled, forecasts, sq_err, abs_err, bin_count, bin_p, bin_v)
           SELECT p.agent_id, p.market_id, p.workspace_id, $2::uuid, $3, 0, 0, coalesce(p.payout, 0) - p.net_cost, 0, 0, 0, '{}', '{}', '{}' FROM positions p WHERE p.market_id = $1`,
          [b.id, mk.metricId, now],
        );
        timed.rowsOnly += performance.now() - s;
        await runner.rollbackTransaction();
      }
      for (const [i, b] of open.entries()) {
        const mk = (await lockMarket(runner.manager, b.id))!;
        for (const variant of i % 2 ? (['plain', 'marked'] as const) : (['marked', 'plain'] as const)) {
          const mark = markStandingsPending(mk, now, 5);
          await runner.startTransaction();
          const s = performance.now();
          await runner.query(variant === 'plain' ? plain : `WITH ${mark.cte} ${plain}`, [b.id, 500, now, false, ...(variant === 'plain' ? [] : mark.params)]);
          timed[variant] += performance.now() - s;
          await runner.rollbackTransaction();
        }
      }
    } finally {
      await runner.release();
    }
    const markPerBook = (timed.marked - timed.plain) / Math.max(1, open.length);
    const enqueuePerBook = inEnqueue / Math.max(1, open.length);
    const share = (100 * (Math.max(0, markPerBook) + enqueuePerBook)) / passPerBook;
    console.log(
      `standings share of the pass: ${share.toFixed(1)}% (target < 5%): the mark ${(markPerBook * 1000).toFixed(0)} us/book (status UPDATE ${(timed.plain / open.length).toFixed(3)} ms plain, ` +
        `${(timed.marked / open.length).toFixed(3)} ms with the mark) + the enqueue call ${(enqueuePerBook * 1000).toFixed(0)} us/book, of ${passPerBook.toFixed(2)} ms/book`,
    );
    console.log(
      `option (a)'s floor (not kept): the holders' results rows alone, written in the pass, ${(timed.rowsOnly / open.length).toFixed(3)} ms/book = ${((100 * timed.rowsOnly) / open.length / passPerBook).toFixed(1)}% of the pass`,
    );
    if (share >= 5) failures.push(`standings share ${share.toFixed(1)}% of the resolution pass >= 5%`);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
    await closeDeps(deps);
    if (!process.env.BENCH_KEEP) await dropDatabase(DB);
  }
  if (!failures.length) console.log('\nall targets met');
  return failures;
}

runBench(main);
