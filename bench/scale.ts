/**
 * Costs as the data grows (issue 60). At 10% and at 100% of a deployment's size (bench/scaleSeed:
 * 100,000 participants, 10,000 workspaces, 100,000 books, 5,000,000 trades at --factor 1), seeded
 * by SQL into a database of its own: the time per book of each scheduled pass (horizons: books
 * opened for 200 metrics; resolution: their due books resolved with readings; settlement-lag
 * voiding: those of 200 metrics without readings voided once the lag has passed; standings: the
 * resolved books' holders recorded), and at 100% the p50/p95 of every GET route of the catalog and
 * every page, with real ids, through the real app. Targets: GET p95 < 50 ms, pages < 100 ms, each
 * pass at 100% within 1.5x of its time at 10%. Not part of npm test.
 *   npx tsx bench/scale.ts [--factor 1] [--requests 20]
 * BENCH_DB names the database (default mpps_bench_scale); BENCH_KEEP=1 keeps it afterwards (to profile on);
 * BENCH_ONLY=<regex> walks only the calls it matches (e.g. BENCH_ONLY=track-record).
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { Client } from 'pg';
import type { Server } from 'node:http';
import { backfillStandings } from '../migrations/1763802300000-Standings';
import { createApp } from '../src/doors';
import { registeredRoutes } from '../src/api/registry';
import { loadConfig } from '../src/config';
import { ManualClock } from '../src/deps';
import { dueMarketIds, refreshHorizons, resolveDueBooks } from '../src/services/lifecycle';
import { ensurePlatform } from '../src/services/identity';
import { sweepPendingStandings } from '../src/services/standings';
import { bootDeps, closeDeps } from '../src/runtime';
import { catalogCalls, catalogIds, seedScale, sizesAt } from './scaleSeed';
import { arg, BENCH_RATE_LIMITS, dropDatabase, recreateDatabase, runBench } from './lib';

const FACTOR = Number(arg('--factor') ?? 1);
const REQUESTS = Number(arg('--requests') ?? 20);
const PASS_METRICS = 200;
const HOLDERS = 10;
const DB = process.env.BENCH_DB ?? 'mpps_bench_scale';
const RESOLVE_AT = new Date('2026-12-01T00:00:30Z');

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: at(0.5), p95: at(0.95) };
}

interface PassTimes {
  horizons: number;
  resolution: number;
  voiding: number;
  standings: number;
}

async function atSize(factor: number, measureRoutes: boolean, failures: string[]): Promise<PassTimes> {
  const sizes = sizesAt(factor);
  const url = await recreateDatabase(DB);
  // BENCH_EXPLAIN_MS: every session in the bench's database logs the plan of each statement over that
  // many ms, with row counts and buffers per node (auto_explain; no per-node timing, which would cost
  // every statement), so a pass or a route that grows with the data shows where (PG_LOG offsets printed).
  const explainMs = process.env.BENCH_EXPLAIN_MS;
  if (explainMs) {
    const settings = { session_preload_libraries: 'auto_explain', 'auto_explain.log_min_duration': String(Number(explainMs)), 'auto_explain.log_analyze': 'on', 'auto_explain.log_timing': 'off', 'auto_explain.log_buffers': 'on', 'auto_explain.log_nested_statements': 'on' };
    const admin = new Client({ connectionString: url });
    await admin.connect();
    for (const [k, v] of Object.entries(settings)) await admin.query(`ALTER DATABASE ${DB} SET ${k} = '${v}'`);
    await admin.end();
  }
  const logAt = (what: string) => {
    if (explainMs) console.log(`  [log offset ${what}: ${statSync(process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log').size}]`);
  };
  const clock = new ManualClock(new Date('2026-11-21T12:00:00Z'));
  const config = loadConfig({ ...process.env, ...BENCH_RATE_LIMITS, DATABASE_URL: url, LOG_LEVEL: 'warn', SCHEDULER: 'false', QUEUE_PREFIX: `benchscale${Date.now()}` });
  const deps = await bootDeps(config, { migrate: true, clock, poolSize: 8 });
  const master = `master-${randomUUID()}`;
  await ensurePlatform(deps.ds, master);
  const q = (sql: string, params: unknown[] = []) => deps.ds.query(sql, params);
  let server: Server | undefined;
  try {
    console.log(`\n## factor ${factor}: ${JSON.stringify(sizes)}`);
    let t0 = performance.now();
    await seedScale(q, sizes, (line) => console.log(line));
    await backfillStandings(deps.ds);
    await q('VACUUM ANALYZE');
    console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // The passes' own metrics: 200 in workspace A (readings: books resolve), 200 in B (none, a
    // settlement lag of 60 minutes, so the least lag, a day, applies: books void once it has passed), 5 horizons each.
    const [wsA, wsB] = (await q(`SELECT id FROM workspaces ORDER BY slug LIMIT 2`)) as { id: string }[];
    for (const [ws, lag] of [
      [wsA.id, null],
      [wsB.id, 60],
    ] as const) {
      await q(
        `INSERT INTO metrics (workspace_id, name, value, total, sort_order, time_preference, measured_at, settlement_lag_minutes)
         SELECT $1, 'pass-' || g, 500, 500, 100 + g, '{"enabled":true,"halfLife":1}'::jsonb, $2, $4 FROM generate_series(1, $3::int) g`,
        [ws, clock.now(), PASS_METRICS, lag],
      );
    }
    const times: PassTimes = { horizons: 0, resolution: 0, voiding: 0, standings: 0 };
    t0 = performance.now();
    const opened = (await refreshHorizons(deps, { workspaceId: wsA.id })).opened + (await refreshHorizons(deps, { workspaceId: wsB.id })).opened;
    times.horizons = (performance.now() - t0) / Math.max(1, opened);
    console.log(`horizons pass: ${opened} books opened for ${2 * PASS_METRICS} metrics, ${times.horizons.toFixed(2)} ms/book`);
    // Holders on every book of the passes' metrics, and a reading in the month for A's metrics.
    await q(
      `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost)
       SELECT mk.id, 'p' || h, mk.workspace_id, CASE WHEN h % 2 = 0 THEN 2000000000 ELSE 0 END, CASE WHEN h % 2 = 1 THEN 2000000000 ELSE 0 END, 1000000000
         FROM markets mk CROSS JOIN generate_series(1, $2::int) h
        WHERE mk.workspace_id = ANY($1::uuid[]) AND mk.status IN ('open', 'closed') AND mk.metric_id IN (SELECT id FROM metrics WHERE name LIKE 'pass-%')`,
      [[wsA.id, wsB.id], HOLDERS],
    );
    // Their pools hold what the holders are owed (the bench measures the passes, not the funding).
    await q(
      `INSERT INTO accounts (id, kind, balance) SELECT 'pool:' || mk.id, 'pool', 100000000000000 FROM markets mk
        WHERE mk.workspace_id = ANY($1::uuid[]) AND mk.metric_id IN (SELECT id FROM metrics WHERE name LIKE 'pass-%')
       ON CONFLICT (id) DO UPDATE SET balance = excluded.balance`,
      [[wsA.id, wsB.id]],
    );
    // A reading inside the period of every book of A's metrics due by the resolution pass.
    await q(
      `INSERT INTO metric_readings (metric_id, workspace_id, at, as_of, value, na, kind)
       SELECT DISTINCT mk.metric_id, mk.workspace_id, mk.period_end - interval '1 minute', mk.period_end - interval '1 minute', 600, false, 'update'
         FROM markets mk WHERE mk.workspace_id = $1 AND mk.period_end <= $2 AND mk.metric_id IN (SELECT id FROM metrics WHERE name LIKE 'pass-%')`,
      [wsA.id, RESOLVE_AT],
    );
    await q('ANALYZE');
    const pass = async (ws: string) => {
      const ids = await dueMarketIds(deps, ws, clock.now());
      const s = performance.now();
      const outcomes = { resolved: 0, voided: 0, other: 0 };
      for (let i = 0; i < ids.length; i += 100) {
        for (const o of await resolveDueBooks(deps, ids.slice(i, i + 100))) {
          if (o.outcome === 'resolved') outcomes.resolved += 1;
          else if (o.outcome === 'voided') outcomes.voided += 1;
          else outcomes.other += 1;
        }
      }
      return { ms: performance.now() - s, books: ids.length, ...outcomes };
    };
    clock.set(RESOLVE_AT);
    logAt('resolution pass start');
    const a = await pass(wsA.id);
    logAt('resolution pass end');
    times.resolution = a.ms / Math.max(1, a.books);
    console.log(`resolution pass: ${a.books} due books (${a.resolved} resolved, ${a.voided} voided, ${a.other} other), ${times.resolution.toFixed(2)} ms/book`);
    if (!a.resolved) failures.push(`factor ${factor}: the resolution pass resolved no book`);
    clock.set(new Date('2026-12-02T01:30:00Z')); // a day (the least lag) after the month's end
    const b = await pass(wsB.id);
    times.voiding = b.ms / Math.max(1, b.books);
    console.log(`settlement-lag voiding pass: ${b.books} due books (${b.voided} voided, ${b.resolved} resolved, ${b.other} other), ${times.voiding.toFixed(2)} ms/book`);
    if (!b.voided) failures.push(`factor ${factor}: the voiding pass voided no book`);
    t0 = performance.now();
    logAt('standings pass start');
    const swept = await sweepPendingStandings(deps);
    logAt('standings pass end');
    times.standings = (performance.now() - t0) / Math.max(1, swept.books);
    console.log(`standings pass: ${swept.books} books, ${swept.holders} holder rows, ${times.standings.toFixed(2)} ms/book`);

    if (measureRoutes) {
      server = createApp(deps).listen(0, '127.0.0.1');
      await new Promise<void>((r) => server!.once('listening', () => r()));
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const ids = await catalogIds(q);
      const minted = await fetch(`${base}/api/agents/${ids.agent}/keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'X-API-Key': master }, body: JSON.stringify({ label: 'scale' }) });
      const key = ((await minted.json()) as { apiKey: string }).apiKey;
      const admin = new Set(registeredRoutes().filter((r) => r.auth.label === 'platform admin').map((r) => `/api${r.path}`));
      console.log(`\n| GET | status | p50 ms | p95 ms |\n|---|---|---|---|`);
      // BENCH_ONLY=<regex>: only the calls it matches (one area's routes and pages at full size, without the whole walk).
      const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
      for (const call of catalogCalls(registeredRoutes(), ids, randomUUID).filter((c) => !only || only.test(c))) {
        const headers = { [admin.has(call) ? 'X-API-Key' : 'X-Agent-Key']: admin.has(call) ? master : key, 'X-Workspace-Id': ids.workspaceId };
        const times: number[] = [];
        let status = 0;
        for (let i = 0; i < REQUESTS + 2; i++) {
          const s = performance.now();
          const r = await fetch(`${base}${call}`, { headers });
          await r.arrayBuffer();
          if (i >= 2) times.push(performance.now() - s); // two warm-up calls
          status = r.status;
        }
        const st = stats(times);
        const page = !call.startsWith('/api/');
        const limit = page ? 100 : 50;
        console.log(`| ${call} | ${status} | ${st.p50.toFixed(1)} | ${st.p95.toFixed(1)} |${st.p95 >= limit ? ` over ${limit} ms` : ''}`);
        if (st.p95 >= limit) failures.push(`${call} p95 ${st.p95.toFixed(1)} ms >= ${limit} ms`);
        if (status === 429) failures.push(`${call} answered 429: a rate limit measured, not the route`);
      }
    }
    return times;
  } finally {
    if (server) await new Promise((r) => server!.close(r));
    await deps.hub.queue(deps.hub.queueFor('standings')).obliterate({ force: true }); // no worker here: the sweep above did the work
    await closeDeps(deps);
    // BENCH_KEEP=1 keeps the last database seeded, to profile a route or a pass on it afterwards.
    if (!process.env.BENCH_KEEP) await dropDatabase(DB);
  }
}

runBench(async () => {
  const failures: string[] = [];
  console.log(`# bench/scale --factor ${FACTOR} (100% = ${JSON.stringify(sizesAt(FACTOR))})`);
  const small = await atSize(FACTOR / 10, false, failures);
  const full = await atSize(FACTOR, true, failures);
  console.log(`\n| pass | ms/book at 10% | ms/book at 100% | ratio |\n|---|---|---|---|`);
  for (const k of Object.keys(full) as (keyof PassTimes)[]) {
    const ratio = full[k] / Math.max(1e-9, small[k]);
    console.log(`| ${k} | ${small[k].toFixed(2)} | ${full[k].toFixed(2)} | ${ratio.toFixed(2)}x |`);
    if (ratio > 1.5) failures.push(`${k} pass: ${ratio.toFixed(2)}x its time per book at 10%`);
  }
  return failures;
});
