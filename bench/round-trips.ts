/**
 * What one round trip costs on this machine, in CPU, at the trade bench's concurrency (8): a Postgres
 * statement (node-postgres, a named prepared `SELECT $1`), a Redis command (ioredis PING), and an HTTP
 * request to a bare Node server (keep-alive, fetch as the bench's client). Each side is counted: the
 * Node process making the calls, the Postgres backends of the bench database, the private Redis, the
 * HTTP server. A trade pays a number of these per batch (issue 29: bench/trade-statements.ts,
 * bench/redis-trips.ts), so round trips x their cost is the floor the service's own work sits on.
 *   npx tsx bench/round-trips.ts [--seconds 5]
 */
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { cpuSnapshot, startPrivateRedis } from './cpu';
import { parseRedisUrl } from '../src/redisUrl';
import { BENCH_SOCKETS, benchRedisUrl, closedLoop, dropDatabase, fmt, recreateDatabase, stopServer, transportName, arg } from './lib';

const SECONDS = Number(arg('--seconds')) || 5;
const CONCURRENCY = 8;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6395;
const DB = 'mpps_bench_round_trips';

interface Row {
  what: string;
  perSecond: number;
  /** CPU microseconds per round trip: the calling process, the serving side, both. */
  callerUs: number;
  serverUs: number;
  totalUs: number;
}

async function measure(what: string, server: () => number, send: () => Promise<unknown>): Promise<Row> {
  await closedLoop(CONCURRENCY, 1, async () => (await send(), true)); // warm-up
  const c0 = process.cpuUsage();
  const s0 = server();
  const r = await closedLoop(CONCURRENCY, SECONDS, async () => (await send(), true));
  const c = process.cpuUsage(c0);
  const s = server() - s0;
  const n = r.ok;
  const callerUs = ((c.user + c.system) / n) | 0;
  const serverUs = ((s * 1e6) / n) | 0;
  return { what, perSecond: n / SECONDS, callerUs, serverUs, totalUs: callerUs + serverUs };
}

async function main() {
  const rows: Row[] = [];
  const url = await recreateDatabase(DB);
  const pool = new Pool({ connectionString: url, max: CONCURRENCY });
  const redisProc = await startPrivateRedis(REDIS_PORT);
  const redis = Array.from({ length: CONCURRENCY }, () => {
    const r = new Redis(parseRedisUrl(benchRedisUrl(REDIS_PORT)));
    r.on('error', () => undefined); // a refused connect while the private Redis starts is retried
    return r;
  });
  // The HTTP server in its own process, as the API is.
  const serverCode = `require('http').createServer((q, s) => { q.resume(); q.on('end', () => { s.setHeader('content-type', 'application/json'); s.end('{"ok":true}'); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', serverCode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((res) => child.stdout!.once('data', (d: Buffer) => res(Number(String(d).trim()))));
  try {
    const pg = () => cpuSnapshot({ servers: {}, db: DB }).postgres;
    let i = 0;
    rows.push(await measure('Postgres statement (prepared SELECT $1)', pg, () => pool.query({ name: 'rt', text: 'SELECT $1::int AS x', values: [i++] })));
    let k = 0;
    rows.push(await measure('Redis command (PING)', () => cpuSnapshot({ servers: {}, db: DB, redisPid: redisProc.pid }).redis, () => redis[k++ % CONCURRENCY].ping()));
    rows.push(
      await measure(
        'HTTP request (fetch -> bare node:http)',
        () => cpuSnapshot({ servers: { http: child.pid! }, db: DB }).http,
        async () => {
          const r = await fetch(`http://127.0.0.1:${port}/x`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
          await r.arrayBuffer();
        },
      ),
    );
  } finally {
    child.kill();
    await pool.end();
    redis.forEach((r) => r.disconnect());
    await stopServer(redisProc);
    await dropDatabase(DB);
  }
  console.log(`# bench/round-trips: ${SECONDS} s each, ${CONCURRENCY} concurrent callers; Postgres and Redis by ${transportName(BENCH_SOCKETS)}\n`);
  console.log('| round trip | per second | caller CPU us | server CPU us | total CPU us |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.what} | ${fmt(r.perSecond, 0)} | ${r.callerUs} | ${r.serverUs} | ${r.totalUs} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
