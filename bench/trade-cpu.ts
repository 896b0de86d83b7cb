/**
 * CPU cost of one trade per process (server processes, the bench database's Postgres backends, a
 * private Redis, the load client) from /proc over a closed loop: what bounds throughput on this
 * machine. Both layouts: one process (npm start) and split roles (npm run api + npm run worker).
 *   npx tsx bench/trade-cpu.ts [--seconds 10] [--layout all|split|both] [--markets 100] [--clients 8] [--wal] [--batch-max 1,2,4,64]
 * With --wal it also prints what Postgres wrote per trade (WAL records and bytes, by relation and
 * record type, through pg_walinspect): counts that do not move with the machine's speed.
 * With --batch-max it runs once per TRADE_BATCH_MAX given and splits each process's CPU into what a
 * batch costs and what a trade adds (bench/batchCost.ts), with the cycle that split predicts for the
 * clients' requests in one serial batch beside the rate measured.
 * Figures go to bench/results/trade-cpu-latest.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpuPerTrade, cpuSnapshot, netOfIdle, startPrivateRedis } from './cpu';
import { fitBatchCost } from './batchCost';
import { batchSizes, BENCH_RATE_LIMITS, closedLoop, dropDatabase, fmt, lastTradeSeq, recreateDatabase, seedTradingWorkspace, startServer, stopServer, tradeSender, withDb, benchRedisUrl, arg } from './lib';

const SECONDS = Number(arg('--seconds')) || 10;
const LAYOUT = arg('--layout') ?? 'both';
const MARKETS = Number(arg('--markets')) || 100;
const CLIENTS = Number(arg('--clients')) || 8;
const WAL = process.argv.includes('--wal');
const BATCH_MAX = arg('--batch-max')?.split(',').map(Number);
const PORT = Number(process.env.BENCH_PORT) || 3933;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6393;
const MASTER = 'bench-master-key-0123456789';
const base = `http://127.0.0.1:${PORT}/api`;
const DB = `mpps_bench_cpu${process.env.BENCH_DB_SUFFIX ?? ''}`;

export async function measureTradeCpu(layout: 'all' | 'split', seconds: number, markets: number, clients = 8, opts: { wal?: boolean; env?: Record<string, string> } = {}) {
  const url = await recreateDatabase(DB);
  const redis = await startPrivateRedis(REDIS_PORT);
  const env = { DATABASE_URL: url, REDIS_URL: benchRedisUrl(REDIS_PORT), MASTER_API_KEY: MASTER, QUEUE_PREFIX: `cpu${Date.now()}`, SCHEDULER: 'false', ...BENCH_RATE_LIMITS, ...opts.env };
  const procs = layout === 'all' ? { server: await startServer(env, PORT) } : { api: await startServer(env, PORT, 'api'), worker: await startServer(env, PORT, 'worker') };
  try {
    // Trades spread over 16 traders (64 from 64 clients, as bench:trades), so lanes rarely wait on
    // each other's account locks: one trader for all would make the lanes run one at a time.
    const seeded = await seedTradingWorkspace(base, MASTER, Math.max(16, Math.min(64, clients)));
    const ids = seeded.markets.slice(0, markets);
    const traders = seeded.traders;
    const send = tradeSender(base, traders, (i) => ids[i % ids.length]);
    await closedLoop(clients, 2, send); // warm-up (and, split, waits for the worker)
    const servers = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, p.pid!]));
    // What the idle service burns (blocking queue reads, timers, the recovery pass) is taken off,
    // so the figure is the trades' own cost whatever rate this busy machine allows.
    const snap = () => cpuSnapshot({ servers, db: DB, redisPid: redis.pid });
    const idle0 = snap();
    const IDLE_S = 3;
    await new Promise((res) => setTimeout(res, IDLE_S * 1000));
    const idle1 = snap();
    const seqBefore = await lastTradeSeq(url);
    const walFrom = await walPosition(url);
    const before = snap();
    const r = await closedLoop(clients, seconds, send);
    const after = snap();
    const batches = await batchSizes(url, seqBefore);
    // The event pump numbers the loop's last events a moment after it: they are the trades' writes too.
    const wal = opts.wal
      ? await new Promise((res) => setTimeout(res, 1000))
          .then(() => walPerTrade(url, walFrom, r.ok))
          .catch((err: Error) => console.log(`(no WAL figures: pg_walinspect, PostgreSQL 15+ and a superuser, answered: ${err.message})`))
      : undefined;
    const raw = cpuPerTrade(before, after, r.ok);
    const idleMsPerS = cpuPerTrade(idle0, idle1, IDLE_S);
    const net = netOfIdle(raw, idleMsPerS, r);
    return { layout, markets: ids.length, concurrency: clients, trades: r.ok, failed: r.failed, tps: r.tps, p50: r.p50, p99: r.p99, cpuMsPerTrade: net, rawCpuMsPerTrade: raw, idleCpuMsPerSecond: idleMsPerS, batches, wal };
  } finally {
    for (const p of Object.values(procs)) await stopServer(p);
    await stopServer(redis);
    await dropDatabase(DB);
  }
}

const walPosition = (url: string) => withDb(url, async (c) => String((await c.query(`SELECT pg_current_wal_lsn() AS l`)).rows[0].l));

/**
 * What Postgres wrote to its WAL from `from` to now, per trade: every record (the loop's and the
 * event pump's; other databases' writes on this server too, which a quiet server keeps near none),
 * by the relation of its first block and its record type. Heap INSERT and Btree INSERT_LEAF are rows
 * and index entries, Heap UPDATE (not HOT) an update that rewrote the row's index entries, Heap LOCK
 * a row lock (FOR UPDATE, or a foreign key's FOR KEY SHARE).
 */
function walPerTrade(url: string, from: string, trades: number) {
  return withDb(url, async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const to = String((await c.query(`SELECT pg_current_wal_lsn() AS l`)).rows[0].l);
    const rows: Array<{ rel: string; kind: string; n: number; bytes: string }> = (
      await c.query(
        `WITH w AS (SELECT resource_manager || '/' || record_type AS kind, record_length + fpi_length AS len,
                           substring(block_ref FROM 'rel [0-9]+/[0-9]+/([0-9]+)') AS node
                      FROM pg_get_wal_records_info($1, $2))
         SELECT coalesce(cl.relname, '-') AS rel, kind, count(*)::int AS n, sum(len)::bigint AS bytes
           FROM w LEFT JOIN pg_class cl ON cl.relfilenode::text = w.node GROUP BY 1, 2 ORDER BY 4 DESC`,
        [from, to],
      )
    ).rows;
    const per = (x: number) => (trades ? x / trades : NaN);
    const count = (kind: string) => per(rows.filter((x) => x.kind === kind).reduce((a, x) => a + x.n, 0));
    return {
      bytes: per(Number((await c.query(`SELECT pg_wal_lsn_diff($2, $1) AS d`, [from, to])).rows[0].d)),
      records: per(rows.reduce((a, x) => a + x.n, 0)),
      rows: count('Heap/INSERT') + count('Heap/INSERT+INIT'),
      indexEntries: count('Btree/INSERT_LEAF'),
      hotUpdates: count('Heap/HOT_UPDATE'),
      updates: count('Heap/UPDATE') + count('Heap/UPDATE+INIT'),
      locks: count('Heap/LOCK'),
      commits: count('Transaction/COMMIT'),
      byRelation: rows.map((x) => ({ rel: x.rel, kind: x.kind, perTrade: per(x.n), bytesPerTrade: per(Number(x.bytes)) })),
    };
  });
}

export function printCpu(m: Awaited<ReturnType<typeof measureTradeCpu>>) {
  console.log(`${m.layout}: ${m.trades} trades at ${fmt(m.tps)}/s (concurrency ${m.concurrency}, ${m.markets} markets, failed ${m.failed}; p50 ${fmt(m.p50)} ms, p99 ${fmt(m.p99)} ms); CPU ms per trade:`);
  for (const [k, v] of Object.entries(m.cpuMsPerTrade)) if (k !== 'serverTotal') console.log(`  ${k.padEnd(9)} ${fmt(v, 2)}`);
  console.log(`  (idle cost taken off: ${fmt(m.idleCpuMsPerSecond.serverTotal, 1)} CPU-ms/s; raw servers total ${fmt(m.rawCpuMsPerTrade.serverTotal, 2)})`);
  console.log(`  trades a batch: mean ${fmt(m.batches.mean, 2)} (${Object.entries(m.batches.sizes).map(([n, b]) => `${n}:${b}`).join(' ')} as size:batches)`);
  console.log(`  servers   ${fmt(m.cpuMsPerTrade.serverTotal, 2)}  (API, workers, Postgres, Redis; 2 cores => ceiling ~${fmt(2000 / m.cpuMsPerTrade.serverTotal, 0)} trades/s)`);
  const w = m.wal;
  if (!w) return;
  console.log(`  WAL a trade: ${fmt(w.bytes, 0)} bytes in ${fmt(w.records, 1)} records: ${fmt(w.rows, 2)} rows inserted, ${fmt(w.indexEntries, 2)} index entries, ${fmt(w.hotUpdates, 2)} HOT updates, ${fmt(w.updates, 2)} other updates, ${fmt(w.locks, 2)} row locks, ${fmt(w.commits, 2)} commits`);
  for (const x of w.byRelation.filter((y) => y.perTrade >= 0.05).slice(0, 30)) console.log(`    ${x.rel.padEnd(28)} ${x.kind.padEnd(24)} ${fmt(x.perTrade, 2).padStart(6)} a trade ${fmt(x.bytesPerTrade, 0).padStart(5)} bytes`);
}

type CpuRun = Awaited<ReturnType<typeof measureTradeCpu>>;

/**
 * Each process's CPU a trade over the runs' batch sizes, split into a part per batch and a part per
 * trade; with every request of the clients in one serial batch, a cycle costs about F + clients·v.
 */
export function printBatchCost(runs: CpuRun[]) {
  const parts = Object.keys(runs[0].cpuMsPerTrade).filter((k) => k !== 'client');
  console.log(`what a batch costs (F, CPU-ms) and what a trade adds (v, CPU-ms), fitted over batches of ${runs.map((r) => fmt(r.batches.mean, 2)).join(', ')}:`);
  const fits = Object.fromEntries(parts.map((k) => [k, fitBatchCost(runs.map((r) => ({ batch: r.batches.mean, cpuMsPerTrade: r.cpuMsPerTrade[k] })))]));
  for (const [k, f] of Object.entries(fits)) console.log(`  ${(k === 'serverTotal' ? 'all servers' : k).padEnd(11)} F ${fmt(f.perBatch, 2).padStart(5)}  v ${fmt(f.perTrade, 2).padStart(5)}`);
  const total = fits.serverTotal;
  const c = runs[0].concurrency;
  const cycle = total.perBatch + c * total.perTrade;
  const best = runs.reduce((a, r) => (r.tps > a.tps ? r : a));
  console.log(`  one batch of all ${c} clients: F + ${c}·v = ${fmt(cycle, 2)} CPU-ms a cycle => ${fmt((c * 1000) / cycle, 0)} trades/s if the cycle is serial (measured: ${fmt(best.tps, 0)} at batches of ${fmt(best.batches.mean, 2)})`);
  return fits;
}

async function main() {
  if (BATCH_MAX) {
    const runs: CpuRun[] = [];
    for (const max of BATCH_MAX) {
      const m = await measureTradeCpu(LAYOUT === 'split' ? 'split' : 'all', SECONDS, MARKETS, CLIENTS, { env: { TRADE_BATCH_MAX: String(max) } });
      console.log(`TRADE_BATCH_MAX=${max}`);
      printCpu(m);
      runs.push(m);
    }
    const fits = printBatchCost(runs);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/trade-cpu-latest.json', JSON.stringify({ at: new Date().toISOString(), batchMax: BATCH_MAX, runs, fits }, null, 2));
    return;
  }
  const out = [];
  for (const layout of LAYOUT === 'both' ? (['all', 'split'] as const) : [LAYOUT as 'all' | 'split']) {
    const m = await measureTradeCpu(layout, SECONDS, MARKETS, CLIENTS, { wal: WAL });
    printCpu(m);
    out.push(m);
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/trade-cpu-latest.json', JSON.stringify({ at: new Date().toISOString(), runs: out }, null, 2));
}

if (require.main === module) main().catch((e) => { console.error(e); process.exit(1); });
