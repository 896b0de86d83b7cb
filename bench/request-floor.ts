/**
 * What a request costs the service before any trading: server CPU (the one process, npm start) per
 * request for the cheapest answer (GET /api/public-config: HTTP, Koa, the router, a presenter), a
 * trade refused by its body's validation (400: the body read and parsed, the schema, an error
 * answer), and a trade (200: all of it, the lane's batch share included), each at 8 clients on kept-
 * alive sockets, and each as a ratio to the cheapest measured in the same run. What a trade costs
 * above the floor is ours to cut; the floor is Node's HTTP and the framework's.
 *   npx tsx bench/request-floor.ts [--seconds 5] [--clients 8]
 */
import { cpuPerTrade, cpuSnapshot, startPrivateRedis } from './cpu';
import { BENCH_RATE_LIMITS, closedLoop, dropDatabase, fmt, rawSender, recreateDatabase, seedTradingWorkspace, startServer, stopServer, tradeSender, benchRedisUrl, arg } from './lib';

const SECONDS = Number(arg('--seconds')) || 5;
const CLIENTS = Number(arg('--clients')) || 8;
const PORT = Number(process.env.BENCH_PORT) || 3934;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6394;
const MASTER = 'bench-master-key-0123456789';
const base = `http://127.0.0.1:${PORT}/api`;
const DB = 'mpps_bench_floor';

async function main() {
  const url = await recreateDatabase(DB);
  // BENCH_QUEUES=postgres: the queues (and the rate-limit counters) on Postgres instead (issue 66's profile of both).
  const redis = process.env.BENCH_QUEUES === 'postgres' ? null : await startPrivateRedis(REDIS_PORT);
  const queues: Record<string, string> = redis ? { REDIS_URL: benchRedisUrl(REDIS_PORT), QUEUE_BACKEND: 'redis' } : { QUEUE_BACKEND: 'postgres' };
  const env = { DATABASE_URL: url, ...queues, MASTER_API_KEY: MASTER, QUEUE_PREFIX: `floor${Date.now()}`, SCHEDULER: 'false', ...BENCH_RATE_LIMITS };
  const startedAt = Date.now();
  const server = await startServer(env, PORT);
  try {
    const seeded = await seedTradingWorkspace(base, MASTER, 16);
    const markets = seeded.markets.slice(0, 100);
    const head = (i: number) => Object.entries(seeded.traders[i % seeded.traders.length]).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const post = (i: number, body: string) => `POST /api/predictions/trade HTTP/1.1\r\nhost: 127.0.0.1\r\n${head(i)}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const kinds: Array<[string, (i: number) => Promise<boolean>]> = [
      ['GET /api/public-config (200)', rawSender(base, () => `GET /api/public-config HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`, (s) => s === 200)],
      ['trade refused by validation (400)', rawSender(base, (i) => post(i, JSON.stringify({ marketId: markets[i % markets.length], direction: 'sideways', amount: 1 })), (s) => s === 400)],
      ['trade (200)', tradeSender(base, seeded.traders, (i) => markets[i % markets.length])],
    ];
    const snap = () => cpuSnapshot({ servers: { server: server.pid! }, db: DB, redisPid: redis?.pid });
    let floor = NaN;
    console.log(`server CPU-ms a request at ${CLIENTS} clients (Postgres and Redis beside it):`);
    for (const [name, send] of kinds) {
      await closedLoop(CLIENTS, 1, send); // warm-up
      const before = snap();
      const from = (Date.now() - startedAt) / 1000;
      const r = await closedLoop(CLIENTS, SECONDS, send);
      // Where the step sits in a server profile (BENCH_NODE_ARGS=--cpu-prof): bench/cpu-top.ts --window FROM,TO.
      console.log(`  (${name}: ${fmt(from, 1)} to ${fmt((Date.now() - startedAt) / 1000, 1)} s after the server was spawned)`);
      const cpu = cpuPerTrade(before, snap(), r.ok);
      if (Number.isNaN(floor)) floor = cpu.server;
      console.log(`  ${name.padEnd(36)} ${fmt(cpu.server, 3)} (${fmt(cpu.server / floor, 2)}x the floor)  postgres ${fmt(cpu.postgres, 3)}  redis ${fmt(cpu.redis ?? 0, 3)}  ${fmt(r.tps, 0)}/s, failed ${r.failed}`);
    }
  } finally {
    await stopServer(server);
    if (redis) await stopServer(redis);
    await dropDatabase(DB);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
