/**
 * Issue 66's four targets, each a ratio to pgbench measured in the same run (npm run bench:trade-targets):
 *   one trader, one market           trades/s / pgbench -N at 1 client      >= 0.25 (and its p50, CPU-ms a trade)
 *   16 traders over 20 markets       trades/s / pgbench -N at 8 clients     >= 0.5
 *   16 traders on one hot market     trades/s / pgbench hot-row at 8 clients >= 0.8
 *   16 traders over 20 markets       service CPU-ms a trade                  <= 1.0
 * "Service CPU" is the server process, the bench database's Postgres backends and the private Redis
 * (bench/cpu.ts), the idle service's burn taken off. pgbench runs at both ends and the run is judged
 * against the mean; the load average is printed beside the figures (the machine is shared).
 * One process (npm start), queues on a private Redis and then on BullMQ's Postgres backend
 * (BENCH_LAYOUTS=redis or postgres for one). BENCH_APPLY_AT_ONCE=true,false runs each backend twice,
 * with TRADE_APPLY_AT_ONCE on and off, back to back: on a machine whose load moves, the two sit
 * side by side in one run. Figures go to bench/results/trade-targets-latest.json.
 *   npx tsx bench/trade-targets.ts [--seconds 6]
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuPerTrade, cpuSnapshot, netOfIdle, startPrivateRedis } from './cpu';
import { bothEnds } from './targets';
import { BENCH_RATE_LIMITS, benchRedisUrl, closedLoop, dropDatabase, fmt, pgbench, pgbenchInit, recreateDatabase, seedTradingWorkspace, startServer, stopServer, tradeSender, withDb, arg } from './lib';

const SECONDS = Number(arg('--seconds')) || 6;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6396;
const PORT = Number(process.env.BENCH_PORT) || 3966;
const DB_SUFFIX = process.env.BENCH_DB_SUFFIX ?? '';
const MASTER = 'bench-master-key-0123456789';
const base = `http://127.0.0.1:${PORT}/api`;

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** pgbench's hot-row update and -N at 8 clients, and -N at one client. */
async function references() {
  const db = `mpps_pgbench66${DB_SUFFIX}`;
  await withDb(await recreateDatabase(db), async (c) => {
    await c.query('CREATE TABLE hot (id int PRIMARY KEY, v bigint NOT NULL)');
    await c.query('INSERT INTO hot VALUES (1, 0)');
  });
  const script = join(mkdtempSync(join(tmpdir(), 'pgb-')), 'hot.sql');
  writeFileSync(script, 'BEGIN;\nUPDATE hot SET v = v + 1 WHERE id = 1;\nCOMMIT;\n');
  pgbenchInit(10, db);
  const hot = pgbench(['-n', '-f', script, '-c', '8', '-j', '2', '-T', String(SECONDS)], db);
  const simple = pgbench(['-n', '-N', '-c', '8', '-j', '2', '-T', String(SECONDS)], db);
  const one = pgbench(['-n', '-N', '-c', '1', '-T', String(SECONDS)], db);
  await dropDatabase(db);
  console.log(`pgbench: hot row (8 clients) ${fmt(hot)} tps, -N (8 clients) ${fmt(simple)} tps, -N (1 client) ${fmt(one)} tps; load average ${loadavg()}`);
  return { hot, simple, one };
}

async function runBackend(backend: 'redis' | 'postgres', atOnce?: string) {
  const dbName = `mpps_bench_targets${DB_SUFFIX}`;
  const dbUrl = await recreateDatabase(dbName);
  const redis = backend === 'redis' ? await startPrivateRedis(REDIS_PORT) : null;
  const queues: Record<string, string> = redis ? { REDIS_URL: benchRedisUrl(REDIS_PORT), QUEUE_BACKEND: 'redis' } : { QUEUE_BACKEND: 'postgres' };
  const env = { DATABASE_URL: dbUrl, ...queues, MASTER_API_KEY: MASTER, QUEUE_PREFIX: `tt${Date.now()}`, SCHEDULER: 'false', ...BENCH_RATE_LIMITS, ...(atOnce ? { TRADE_APPLY_AT_ONCE: atOnce } : {}) };
  const server = await startServer(env, PORT);
  try {
    const { markets, traders } = await seedTradingWorkspace(base, MASTER, 16);
    const twenty = markets.slice(0, 20);
    const hot = tradeSender(base, traders, () => twenty[0]);
    const spread = tradeSender(base, traders, (i) => twenty[i % twenty.length]);
    await closedLoop(4, 2, spread); // warm-up
    const snap = () => cpuSnapshot({ servers: { server: server.pid! }, db: dbName, redisPid: redis?.pid });
    const idle0 = snap();
    await new Promise((r) => setTimeout(r, 2000));
    const idle = cpuPerTrade(idle0, snap(), 2);
    const measured = async (clients: number, send: typeof hot) => {
      const before = snap();
      const load = await closedLoop(clients, SECONDS, send);
      const cpu = netOfIdle(cpuPerTrade(before, snap(), load.ok), idle, load);
      return { ...load, cpu };
    };
    const one = await measured(1, hot);
    const sixteen = await measured(16, spread);
    const hot16 = await measured(16, hot);
    const cpuText = (c: Record<string, number>) => `server ${fmt(c.server, 2)}, postgres ${fmt(c.postgres, 2)}${c.redis !== undefined ? `, redis ${fmt(c.redis, 2)}` : ''}, total ${fmt(c.serverTotal, 2)}`;
    const name = `queues on ${backend}${atOnce ? `, TRADE_APPLY_AT_ONCE=${atOnce}` : ''}`;
    console.log(`\n## ${name} (load average ${loadavg()})`);
    console.log(`1 trader, 1 market: ${fmt(one.tps)}/s, p50 ${fmt(one.p50, 2)} ms, p99 ${fmt(one.p99, 2)} ms; CPU-ms a trade ${cpuText(one.cpu)}; failed ${one.failed}`);
    console.log(`16 traders, 20 markets: ${fmt(sixteen.tps)}/s, p50 ${fmt(sixteen.p50, 2)} ms; CPU-ms a trade ${cpuText(sixteen.cpu)}; failed ${sixteen.failed}`);
    console.log(`16 traders, 1 market: ${fmt(hot16.tps)}/s, p50 ${fmt(hot16.p50, 2)} ms; CPU-ms a trade ${cpuText(hot16.cpu)}; failed ${hot16.failed}`);
    return { backend: name, loadAverage: loadavg(), one, sixteen, hot16 };
  } finally {
    await stopServer(server);
    if (redis) await stopServer(redis);
    await dropDatabase(dbName);
  }
}

async function main() {
  console.log(`# bench/trade-targets: ${SECONDS}s a step; load average ${loadavg()}`);
  const before = await references();
  const backends = (process.env.BENCH_LAYOUTS ?? 'redis,postgres').split(',') as Array<'redis' | 'postgres'>;
  const runs = [];
  const variants = process.env.BENCH_APPLY_AT_ONCE?.split(',') ?? [undefined];
  for (const b of backends) for (const v of variants) runs.push(await runBackend(b, v));
  console.log('');
  const after = await references();
  const { mean: pg, drift } = bothEnds(before, after);
  console.log(`pgbench drift over the run: hot ${fmt(100 * drift.hot)}%, -N ${fmt(100 * drift.simple)}%, -N 1 client ${fmt(100 * drift.one)}%`);
  const judged = runs.map((r) => {
    const rows = [
      ['1 trader / pgbench -N 1 client', r.one.tps / pg.one, 0.25, 'min'],
      ['16 traders, 20 markets / pgbench -N', r.sixteen.tps / pg.simple, 0.5, 'min'],
      ['16 traders, 1 market / pgbench hot row', r.hot16.tps / pg.hot, 0.8, 'min'],
      ['service CPU-ms a trade, 16 traders, 20 markets', r.sixteen.cpu.serverTotal, 1.0, 'max'],
    ] as const;
    console.log(`\n### ${r.backend}\n| target | figure | wanted | met |\n|---|---|---|---|`);
    for (const [name, v, t, kind] of rows) console.log(`| ${name} | ${fmt(v, 3)} | ${kind === 'min' ? '>=' : '<='} ${t} | ${(kind === 'min' ? v >= t : v <= t) ? 'yes' : `no (x${fmt(kind === 'min' ? t / v : v / t, 2)} short)`} |`);
    console.log(`(1 trader: p50 ${fmt(r.one.p50, 2)} ms, ${fmt(r.one.cpu.serverTotal, 2)} service CPU-ms a trade)`);
    return { ...r, targets: Object.fromEntries(rows.map(([n, v]) => [n, v])) };
  });
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/trade-targets-latest.json', `${JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, pgbench: pg, drift, runs: judged }, null, 2)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
