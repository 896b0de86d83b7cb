/**
 * Where a trade batch's cycle goes over HTTP under load (issue 29): the server publishes each batch's
 * stages (src/services/trading/batchTimeline.ts), a preloaded probe (bench/timelineprobe.cjs) writes
 * them down, and this prints, per load, the p50 and mean of each stage in ms:
 *   gather   first to last of the batch's requests reaching the lane
 *   held     last request to the batch's send (the lane's wait, or its batch in flight)
 *   hop      send to the lane worker's start (registering for the outcomes' notice, BullMQ's add, the worker's fetch)
 *   read     start to the locks and the read (BEGIN, LOCK_BOOKS, BATCH_OPEN: one round trip)
 *   price    the batch in memory
 *   write    the write and COMMIT (one round trip), to its reply
 *   answer   the commit's reply to the API hearing the outcomes (negative: heard first, by LISTEN)
 *   back     (closed loops on one market) the answer to the last of the next batch's requests reaching the lane: the responses, the callers' turnaround, their requests' way in
 *   cycle    (one market) one batch's send to the next's
 * A batch whose transaction or job was retried (a stage marked twice) is left out and counted. One
 * all-in-one server, one batch in flight a lane (TRADE_BATCH_INFLIGHT=1, so `back` and `cycle` follow
 * one batch to the next), queues on a private Redis. Not part of npm test.
 *   npx tsx bench/cycle.ts [--markets 1] [--clients 1,8,16] [--rates 600] [--seconds 6]
 * BENCH_SERVER=dist runs the compiled service.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startPrivateRedis } from './cpu';
import { BENCH_RATE_LIMITS, benchRedisUrl, closedLoop, dropDatabase, fmt, openLoop, percentile, recreateDatabase, seedTradingWorkspace, startServer, stopServer, tradeSender, type LoadResult, arg } from './lib';
import { BATCH_STAGES, timelineNow, type BatchMark, type BatchStage } from '../src/services/trading/batchTimeline';

const list = (s: string | undefined) => (s ? s.split(',').filter(Boolean).map(Number) : []);
const MARKETS = Number(arg('--markets')) || 1;
const CLIENTS = list(arg('--clients') ?? '1,8,16');
const RATES = list(arg('--rates'));
const SECONDS = Number(arg('--seconds')) || 6;
const PORT = Number(process.env.BENCH_PORT) || 3966;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6396;
const MASTER = 'bench-master-key-0123456789';
const DB = `mpps_bench_cycle${process.env.BENCH_DB_SUFFIX ?? ''}`;
const base = `http://127.0.0.1:${PORT}/api`;

/** One batch's stages; `retried`: a stage was marked twice (a retried transaction or job). */
type Batch = Partial<Record<BatchStage, number>> & { trades: number; firstArrival: number; lastArrival: number; retried: boolean };

/** Every batch with all its stages, marked once each, in the order they were sent; and how many were left out as retried. */
function batchesOf(marks: readonly BatchMark[]): { batches: Batch[]; retried: number } {
  const byId = new Map<string, Batch>();
  for (const m of marks) {
    let b = byId.get(m.batch);
    if (!b) byId.set(m.batch, (b = { trades: 0, firstArrival: NaN, lastArrival: NaN, retried: false }));
    if (b[m.stage] !== undefined) b.retried = true;
    b[m.stage] = m.at;
    if (m.stage === 'sent') Object.assign(b, { trades: m.trades, firstArrival: m.firstArrival ?? NaN, lastArrival: m.lastArrival ?? NaN });
  }
  const whole = [...byId.values()].filter((b) => BATCH_STAGES.every((s) => b[s] !== undefined));
  return { batches: whole.filter((b) => !b.retried).sort((a, b) => a.sent! - b.sent!), retried: whole.filter((b) => b.retried).length };
}

/** Each stage's durations (ms) over the batches sent in [from, to); `back` and `cycle` only where one lane's batches follow each other. */
function stagesOf(all: readonly Batch[], from: number, to: number, oneLane: boolean, closed: boolean): Record<string, number[]> {
  const bs = all.filter((b) => b.sent! >= from && b.sent! < to);
  const out: Record<string, number[]> = {
    gather: bs.map((b) => b.lastArrival - b.firstArrival),
    held: bs.map((b) => b.sent! - b.lastArrival),
    hop: bs.map((b) => b.started! - b.sent!),
    read: bs.map((b) => b.opened! - b.started!),
    price: bs.map((b) => b.priced! - b.opened!),
    write: bs.map((b) => b.written! - b.priced!),
    answer: bs.map((b) => b.answered! - b.written!),
  };
  if (oneLane) {
    const pairs = bs.slice(1).map((b, i) => [bs[i], b] as const);
    if (closed) out.back = pairs.map(([a, b]) => b.lastArrival - a.answered!);
    out.cycle = pairs.map(([a, b]) => b.sent! - a.sent!);
  }
  out.trades = bs.map((b) => b.trades);
  return out;
}

function p50AndMean(all: number[]): string {
  const xs = all.filter(Number.isFinite); // a batch sent before the probe listened has no arrival times
  if (!xs.length) return 'n/a';
  const sorted = [...xs].sort((a, b) => a - b);
  return `${fmt(percentile(sorted, 50), 2)} (${fmt(xs.reduce((s, x) => s + x, 0) / xs.length, 2)})`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cycle-'));
  const file = join(dir, 'timeline.jsonl');
  const url = await recreateDatabase(DB);
  // BENCH_QUEUES=postgres: the queues on BullMQ's Postgres backend instead (issue 66's profile of both).
  const onPg = process.env.BENCH_QUEUES === 'postgres';
  const redis = onPg ? null : await startPrivateRedis(REDIS_PORT);
  const queues: Record<string, string> = onPg ? { QUEUE_BACKEND: 'postgres' } : { REDIS_URL: benchRedisUrl(REDIS_PORT), QUEUE_BACKEND: 'redis' };
  const env = { DATABASE_URL: url, ...queues, MASTER_API_KEY: MASTER, QUEUE_PREFIX: `cycle${Date.now()}`, SCHEDULER: 'false', ...BENCH_RATE_LIMITS, TRADE_BATCH_INFLIGHT: '1', TIMELINE_FILE: file };
  const server = await startServer(env, PORT, undefined, ['--require', resolve('bench/timelineprobe.cjs')]);
  const loads: Array<{ name: string; closed: boolean; from: number; to: number; r: LoadResult }> = [];
  try {
    const seeded = await seedTradingWorkspace(base, MASTER, 64, 'cycle');
    const ids = seeded.markets.slice(0, MARKETS);
    const send = tradeSender(base, seeded.traders, (i) => ids[i % ids.length]);
    await closedLoop(Math.max(8, ...CLIENTS), 3, send); // warm-up
    // A pause between loads: a batch of one load's last requests is not counted in the next one's.
    const pause = () => new Promise((res) => setTimeout(res, 300));
    for (const c of CLIENTS) {
      const from = timelineNow();
      const r = await closedLoop(c, SECONDS, send);
      loads.push({ name: `${c} client${c === 1 ? '' : 's'}`, closed: true, from, to: timelineNow(), r });
      await pause();
    }
    for (const rate of RATES) {
      const from = timelineNow();
      const r = await openLoop(rate, SECONDS, send);
      loads.push({ name: `${rate}/s open`, closed: false, from, to: timelineNow(), r });
      await pause();
    }
  } finally {
    await stopServer(server); // the probe writes its last marks at exit
    if (redis) await stopServer(redis);
    await dropDatabase(DB);
  }
  const marks = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as BatchMark);
  rmSync(dir, { recursive: true, force: true });
  const { batches, retried } = batchesOf(marks);
  const per = loads.map((l) => stagesOf(batches, l.from, l.to, MARKETS === 1, l.closed));
  console.log(`# bench/cycle: ${MARKETS} market${MARKETS === 1 ? '' : 's'}, ${SECONDS} s a load; ms a batch, p50 (mean)\n`);
  console.log(`| stage | ${loads.map((l) => l.name).join(' | ')} |`);
  console.log(`|---|${loads.map(() => '---').join('|')}|`);
  console.log(`| trades/s (p50 ms a request) | ${loads.map((l) => `${fmt(l.r.tps)} (${fmt(l.r.p50, 2)})`).join(' | ')} |`);
  console.log(`| batches | ${per.map((p) => p.trades.length).join(' | ')} |`);
  for (const stage of ['trades', 'gather', 'held', 'hop', 'read', 'price', 'write', 'answer', 'back', 'cycle'])
    if (per.some((p) => p[stage])) console.log(`| ${stage} | ${per.map((p) => (p[stage] ? p50AndMean(p[stage]) : '-')).join(' | ')} |`);
  const unjoined = new Set(marks.map((m) => m.batch)).size - batches.length - retried;
  if (unjoined) console.log(`\n${unjoined} batch(es) without every stage (the warm-up's last, or a batch cut off) left out`);
  if (retried) console.log(`${retried} batch(es) whose transaction or job was retried left out`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
