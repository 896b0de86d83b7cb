/**
 * Trades per second and latency over HTTP, one hot market and 100 markets, several concurrencies,
 * against Postgres's own ceiling measured in the same run with pgbench. pgbench and the lane transaction
 * alone run at both ends of the run, and the targets are judged against the mean of the two ends (the
 * drift between them is printed). Not part of npm test.
 *   npx tsx bench/trades.ts [--seconds 8] [--orders 100] [--layout all|split|both]   (or BENCH_ORDERS=100)
 * Both process layouts by default: one process (npm start) and split roles (npm run api + npm run
 * worker), each with the queues on Redis and on BullMQ's Postgres backend (BENCH_LAYOUTS=redis or
 * postgres for one). Each run also measures CPU-ms per trade per process (bench/cpu.ts). Every figure goes
 * to bench/results/latest.json; bench/compare.ts sets two such files side by side.
 * With --orders N, N resting limit orders are then placed on the hot market (walls every trade
 * loads but does not reach) and its trades/s at 16 clients is measured without and with them.
 */
import { mkdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { cpuPerTrade, cpuSnapshot, machineBusySeconds, netOfIdle, startPrivateRedis } from './cpu';
import { bothEnds, judgeTargets, targetsTable, type Step, type TargetInput } from './targets';
import { openLaneBench, timeBatches } from './laneAlone';
import { batchSizes, BENCH_RATE_LIMITS, closedLoop, dropDatabase, dropQueuePrefix, fmt, lastTradeSeq, openLoop, pgbench, pgbenchInit, recreateDatabase, seedTradingWorkspace, startServer, stopServer, apiCaller, tradeSender, withDb, type LoadResult, benchRedisUrl, BENCH_SOCKETS, transportName, arg } from './lib';

const SECONDS = Number(arg('--seconds')) || 8;
const ORDERS = Number(arg('--orders') ?? process.env.BENCH_ORDERS) || 0;
const LAYOUTS = (arg('--layout') ?? 'both') === 'both' ? (['all', 'split'] as const) : [arg('--layout') as 'all' | 'split'];
// BENCH_PORT / BENCH_REDIS_PORT / BENCH_DB_SUFFIX: two benches side by side (another worktree's) do not collide.
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6394;
const PORT = Number(process.env.BENCH_PORT) || 3917;
const DB_SUFFIX = process.env.BENCH_DB_SUFFIX ?? '';
const MASTER = 'bench-master-key-0123456789';
const base = `http://127.0.0.1:${PORT}/api`;

const call = apiCaller(base);

async function pgCeiling() {
  const db = `mpps_pgbench${DB_SUFFIX}`;
  const url = await recreateDatabase(db);
  await withDb(url, async (c) => {
    await c.query('CREATE TABLE hot (id int PRIMARY KEY, v bigint NOT NULL)');
    await c.query('INSERT INTO hot VALUES (1, 0)');
  });
  const dir = mkdtempSync(join(tmpdir(), 'pgb-'));
  const script = join(dir, 'hot.sql');
  writeFileSync(script, 'BEGIN;\nUPDATE hot SET v = v + 1 WHERE id = 1;\nCOMMIT;\n');
  pgbenchInit(10, db);
  const hot = pgbench(['-n', '-f', script, '-c', '8', '-j', '2', '-T', String(SECONDS)], db);
  const meter = machineMeter();
  const simple = pgbench(['-n', '-N', '-c', '8', '-j', '2', '-T', String(SECONDS)], db);
  const simpleLoad = meter(simple);
  await dropDatabase(db);
  return { hot, simple, simpleLoad };
}

/**
 * Started before a load, called after it with the load's rate: what it cost the whole machine
 * (machineBusySeconds), CPU-ms a unit of it (a transaction, a trade; its client included) and cores
 * kept busy. A ratio of two loads' rates is the product of the two: (CPU a unit of the one / of the
 * other) x (cores busy of the other / of the one).
 */
function machineMeter(): (rate: number) => { msPerUnit: number; cores: number } {
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  return (rate) => {
    const cores = (machineBusySeconds() - busy0) / ((performance.now() - t0) / 1000);
    return { msPerUnit: (cores * 1000) / rate, cores };
  };
}

/**
 * The lane transaction alone in this process (bench/laneAlone.ts), in the same run: what the trade
 * path could reach if HTTP and the queue cost nothing. Batches of the sizes the steps make (8 at 8
 * clients, up to 64 above), after a warm-up as long as one measure, so the JIT is as warm as a server's.
 */
async function laneAlone(): Promise<NonNullable<TargetInput['alone']>> {
  const lane = await openLaneBench(`mpps_bench_lane${DB_SUFFIX}`);
  try {
    const seconds = Math.max(2, SECONDS / 2);
    await timeBatches(lane, 8, 8, { seconds });
    const one = await timeBatches(lane, 1, 1, { seconds });
    const hot8 = await timeBatches(lane, 8, 1, { seconds });
    const spread8 = await timeBatches(lane, 8, 8, { seconds });
    const hot64 = await timeBatches(lane, 64, 1, { seconds });
    return { oneP50: one.p50, hot8: hot8.tps, spread8: spread8.tps, hot64: hot64.tps };
  } finally {
    await lane.close();
  }
}

type Ceiling = Awaited<ReturnType<typeof pgCeiling>>;
type Alone = NonNullable<TargetInput['alone']>;

/** pgbench and the lane alone, measured once: printed as they come, with `when` (before or after the steps). */
async function references(when: string): Promise<{ ceiling: Ceiling; alone: Alone }> {
  const ceiling = await pgCeiling();
  console.log(`pgbench ${when} the steps: hot-row update (8 clients) ${fmt(ceiling.hot)} tps, -N (8 clients) ${fmt(ceiling.simple)} tps`);
  const alone = await laneAlone();
  console.log(
    `the lane transaction alone ${when} the steps (in process, no HTTP, no queue): a batch of 1 p50 ${fmt(alone.oneP50, 2)} ms; ` +
      `batches of 8 on 1 book ${fmt(alone.hot8)} trades/s, of 64 on 1 book ${fmt(alone.hot64)}, of 8 over 8 books ${fmt(alone.spread8)}`,
  );
  return { ceiling, alone };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${fmt(100 * x)}%`;

async function main() {
  console.log(`# bench/trades: ${SECONDS}s per step; load average ${loadavg()}; Postgres and Redis by ${transportName(BENCH_SOCKETS)}`);
  const before = await references('before');
  const layouts = [];
  // The same load on each queue backend, in one run: Redis (production) and BullMQ's Postgres backend (zero setup).
  const backends = (process.env.BENCH_LAYOUTS ?? 'redis,postgres').split(',') as Array<'redis' | 'postgres'>;
  for (const backend of backends) for (const layout of LAYOUTS) layouts.push(await runLayout(layout, backend, before.ceiling));
  // The machine drifts over the minutes the steps take: the references again, and the run judged against the mean of both ends.
  console.log('');
  const after = await references('after');
  const ends = (c: Ceiling) => ({ hot: c.hot, simple: c.simple, cores: c.simpleLoad.cores });
  const hotRow = bothEnds(ends(before.ceiling), ends(after.ceiling));
  // Cores busy under -N averaged; its CPU a transaction derived from them and the mean rate, so the split of the -N ratio multiplies out.
  const { hot, simple, cores } = hotRow.mean;
  const ceiling: Ceiling = { hot, simple, simpleLoad: { cores, msPerUnit: (cores * 1000) / simple } };
  const lane = bothEnds(before.alone, after.alone);
  console.log(
    `drift from before to after the steps: pgbench hot row ${pct(hotRow.drift.hot)}, -N ${pct(hotRow.drift.simple)}; ` +
      `the lane alone ${pct(lane.drift.hot8)} (8 on 1 book), ${pct(lane.drift.hot64)} (64), ${pct(lane.drift.spread8)} (8 over 8), batch of 1 ${pct(lane.drift.oneP50)}. ` +
      `Judged against the means: hot row ${fmt(ceiling.hot)}, -N ${fmt(ceiling.simple)} tps.`,
  );
  const runs = layouts.map((l) => l.judge(ceiling, lane.mean));
  const out = {
    at: new Date().toISOString(),
    seconds: SECONDS,
    sockets: BENCH_SOCKETS,
    loadAverage: loadavg(),
    pgbench: ceiling,
    laneAlone: lane.mean,
    ends: { before, after, drift: { pgbench: hotRow.drift, laneAlone: lane.drift } },
    runs,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', `${JSON.stringify(out, null, 2)}\n`);
  console.log('\nfigures written to bench/results/latest.json (compare two runs: npx tsx bench/compare.ts A.json B.json)');
}

function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** One layout's steps; `judge` then sets them against the references measured at both ends of the run. */
async function runLayout(layout: 'all' | 'split', backend: 'redis' | 'postgres', before: { hot: number; simple: number }) {
  const name = `${layout}, queues on ${backend}`;
  console.log(`\n## layout ${layout === 'all' ? 'all-in-one (npm start)' : 'split (npm run api + npm run worker)'}, queues on ${backend === 'redis' ? 'Redis' : "BullMQ's Postgres backend"}`);
  const dbName = `mpps_bench_trades${DB_SUFFIX}`;
  const dbUrl = await recreateDatabase(dbName);
  const prefix = `bench${Date.now()}`;
  // A private Redis: its CPU is the run's alone (the shared one serves other users).
  const redis = backend === 'redis' ? await startPrivateRedis(REDIS_PORT) : null;
  const queues: Record<string, string> = redis ? { REDIS_URL: benchRedisUrl(REDIS_PORT), QUEUE_BACKEND: 'redis' } : { QUEUE_BACKEND: 'postgres' };
  const env = { DATABASE_URL: dbUrl, ...queues, MASTER_API_KEY: MASTER, QUEUE_PREFIX: prefix, SCHEDULER: 'false', ...BENCH_RATE_LIMITS };
  const procs = layout === 'all' ? { server: await startServer(env, PORT) } : { api: await startServer(env, PORT, 'api'), worker: await startServer(env, PORT, 'worker') };
  try {
    const { ownerHeaders: ownerH, markets, traders } = await seedTradingWorkspace(base, MASTER, 64);
    const hundred = markets.slice(0, 100);
    console.log(`markets: ${markets.length} open, using ${hundred.length}`);
    const hot = tradeSender(base, traders, () => hundred[0]);
    const spread = tradeSender(base, traders, (i) => hundred[i % hundred.length]);
    await closedLoop(4, 2, hot); // warm-up
    // What the idle service burns (bench/cpu.ts), taken off the CPU lines below. Measured here, before
    // the steps: after them, autovacuum and the event pump may still be working through their rows.
    const servers = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, p.pid!]));
    const snap = () => cpuSnapshot({ servers, db: dbName, redisPid: redis?.pid });
    const idle0 = snap();
    await new Promise((r) => setTimeout(r, 3000));
    const idle = cpuPerTrade(idle0, snap(), 3);
    // Deadlocks Postgres broke in this database during each step (issue 29: none by construction).
    const stats = new Client({ connectionString: dbUrl });
    await stats.connect();
    const deadlocks = async () => {
      if ((await stats.query(`SELECT current_setting('server_version_num')::int >= 150000 AS flush`)).rows[0].flush) await stats.query('SELECT pg_stat_force_next_flush()');
      await stats.query('SELECT pg_stat_clear_snapshot()');
      return Number((await stats.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
    };
    const counted = async <T>(run: () => Promise<T>): Promise<T & { deadlocks: number }> => {
      const d0 = await deadlocks();
      const r = await run();
      // The backends report their counters when idle or at most once a second: wait that long before reading.
      await new Promise((res) => setTimeout(res, 1100));
      return { ...r, deadlocks: (await deadlocks()) - d0 };
    };
    // Trades a lane transaction applied in a step (mean): each batch pays the queue hop and the round trips once.
    const batched = async (run: () => Promise<LoadResult>): Promise<LoadResult & { batch: number }> => {
      const from = await lastTradeSeq(dbUrl);
      const r = await run();
      return { ...r, batch: (await batchSizes(dbUrl, from)).mean };
    };
    const rows: string[] = [];
    const steps: Array<Step & Record<string, number>> = [];
    let bestHot = 0;
    let bestSpread = 0;
    for (const c of (process.env.BENCH_CLIENTS ?? '1,8,16,64,256').split(',').map(Number)) {
      const h = await counted(() => batched(() => closedLoop(c, SECONDS, hot)));
      const s = await counted(() => batched(() => closedLoop(c, SECONDS, spread)));
      bestHot = Math.max(bestHot, h.tps);
      bestSpread = Math.max(bestSpread, s.tps);
      steps.push({ concurrency: c, hotTps: h.tps, hotP50: h.p50, hotP99: h.p99, spreadTps: s.tps, spreadP50: s.p50, spreadP99: s.p99, failed: h.failed + s.failed, hotDeadlocks: h.deadlocks, spreadDeadlocks: s.deadlocks, hotBatch: h.batch, spreadBatch: s.batch });
      rows.push(`| ${c} | ${fmt(h.tps)} | ${fmt(h.p50)} | ${fmt(h.p99)} | ${fmt(h.batch, 2)} | ${h.deadlocks} | ${fmt(s.tps)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.batch, 2)} | ${s.deadlocks} | ${h.failed + s.failed} |`);
    }
    await stats.end();
    console.log('\n| concurrency | 1 market tps | p50 ms | p99 ms | mean batch | deadlocks | 100 markets tps | p50 ms | p99 ms | mean batch | deadlocks | failed |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
    const halfHot = await openLoop(bestHot / 2, SECONDS, hot);
    const halfSpread = await openLoop(bestSpread / 2, SECONDS, spread);
    console.log(`\nat half the saturating rate: 1 market ${fmt(bestHot / 2)}/s -> p50 ${fmt(halfHot.p50)} ms, p99 ${fmt(halfHot.p99)} ms; 100 markets ${fmt(bestSpread / 2)}/s -> p50 ${fmt(halfSpread.p50)} ms, p99 ${fmt(halfSpread.p99)} ms`);
    // CPU per trade of a closed loop on 100 markets, the idle cost taken off.
    const cpuOf = async (clients: number) => {
      const before = snap();
      const meter = machineMeter();
      const load = await closedLoop(clients, SECONDS, spread);
      return { load, cpu: netOfIdle(cpuPerTrade(before, snap(), load.ok), idle, load), machine: meter(load.tps) };
    };
    const { load, cpu, machine } = await cpuOf(8);
    console.log(`CPU ms per trade (100 markets, 8 clients, ${fmt(load.tps)}/s): ${Object.entries(cpu).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}`);
    // And at saturation (the target's condition): 100 markets at the concurrency that gave the most trades/s.
    const satClients = steps.reduce((b, s) => (s.spreadTps > b.spreadTps ? s : b), steps[0]).concurrency;
    const { load: sat, cpu: cpuSat } = await cpuOf(satClients);
    console.log(`CPU ms per trade at saturation (100 markets, ${satClients} clients, ${fmt(sat.tps)}/s): ${Object.entries(cpuSat).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')} (target serverTotal <= 2.0)`);
    const result: Record<string, unknown> = {
      layout: backend === 'redis' ? layout : `${layout}/postgres-queues`,
      queues: backend,
      steps,
      bestHot,
      bestSpread,
      halfRate: { hot: { rate: bestHot / 2, p50: halfHot.p50, p99: halfHot.p99 }, spread: { rate: bestSpread / 2, p50: halfSpread.p50, p99: halfSpread.p99 } },
      cpuMsPerTrade: cpu,
      cpuAtSaturation: { clients: satClients, tps: sat.tps, msPerTrade: cpuSat },
      idleCpuMsPerSecond: idle,
    };
    if (ORDERS > 0) {
      const without = await closedLoop(16, SECONDS, hot);
      // Walls on both sides, beyond where these small trades move the price: every buy loads them.
      for (let i = 0; i < ORDERS; i++) {
        const higher = i % 2 === 0;
        const step = Math.floor(i / 2) % 30;
        await call('POST', '/predictions/orders', { marketId: hundred[0], direction: higher ? 'higher' : 'lower', limit: higher ? 100 + step * 10 : 900 - step * 10, shares: 10 }, traders[i % traders.length]);
      }
      const book = await call('GET', `/predictions/markets/${hundred[0]}/orderbook`, undefined, ownerH);
      const resting = [...book.higher, ...book.lower].reduce((n: number, l: { orders: number }) => n + l.orders, 0);
      const withOrders = await closedLoop(16, SECONDS, hot);
      console.log(`\nhot market, 16 clients: ${fmt(without.tps)} tps without orders, ${fmt(withOrders.tps)} tps with ${resting} resting orders (p50 ${fmt(without.p50)} -> ${fmt(withOrders.p50)} ms, p99 ${fmt(without.p99)} -> ${fmt(withOrders.p99)} ms, failed ${without.failed + withOrders.failed})`);
      console.log(`ratio with / without orders: ${fmt(withOrders.tps / without.tps, 2)} (target >= 0.8)`);
      result.orders = { resting, without: without.tps, with: withOrders.tps };
    }
    // Provisional, against the references before the steps: printed now, in case a later layout fails before the run's verdict.
    console.log(`provisional (against pgbench before the steps): 1 market / hot row ${fmt(bestHot / before.hot, 2)}, 100 markets / -N ${fmt(bestSpread / before.simple, 2)}`);
    const judge = (ceiling: Ceiling, alone: Alone) => {
      console.log(`\n## ${name}, against the references`);
      console.log(`ratio 1 market / pgbench hot row: ${fmt(bestHot / ceiling.hot, 2)} (target >= 0.5)`);
      console.log(`ratio 100 markets / pgbench -N:   ${fmt(bestSpread / ceiling.simple, 2)} (target >= 0.35)`);
      // The 8-client ratio to pgbench -N split in two: what a unit costs the machine, and how much of it each keeps busy.
      const pg = ceiling.simpleLoad;
      const split = { cpuFactor: pg.msPerUnit / machine.msPerUnit, coresFactor: machine.cores / pg.cores };
      console.log(
        `against pgbench -N at 8 clients, whole machine: ${fmt(machine.msPerUnit, 2)} CPU-ms a trade vs ${fmt(pg.msPerUnit, 2)} a transaction (x${fmt(split.cpuFactor, 2)}), ` +
          `${fmt(machine.cores, 2)} cores busy vs ${fmt(pg.cores, 2)} (x${fmt(split.coresFactor, 2)}): ${fmt(load.tps / ceiling.simple, 3)} of its rate`,
      );
      const targets = judgeTargets({ steps, pgbench: ceiling, halfRate: { hot: halfHot, spread: halfSpread }, cpuAtSaturation: cpuSat.serverTotal, alone });
      console.log(`\nissue 29's targets (${name}):\n${targetsTable(targets)}`);
      return { ...result, ratios: { hotVsPgbenchHotRow: bestHot / ceiling.hot, spreadVsPgbenchN: bestSpread / ceiling.simple }, againstPgbenchN: { trade: machine, pgbench: pg, ...split }, targets };
    };
    return { judge };
  } finally {
    for (const p of Object.values(procs)) await stopServer(p);
    if (redis) {
      await dropQueuePrefix(prefix, benchRedisUrl(REDIS_PORT)).catch(() => 0); // the private Redis keeps nothing anyway (no persistence)
      await stopServer(redis);
    } // the Postgres queues went with the database
    await dropDatabase(dbName);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
