/**
 * What sets the p99 at a steady open load (issue 29's "half the saturating rate"): each request's
 * latency as a time series, lined up with the server's garbage collections and event-loop stalls
 * (bench/gcprobe.cjs). Prints, per window of the load, p50 / p99 / max and the mark-compacts in it,
 * then the 50 ms slices whose slowest request took over --slow ms and what the server's heap did
 * within 60 ms before them, and how busy its event loop was. One all-in-one server, queues on a private Redis. Not part of npm test.
 *   npx tsx bench/tail.ts [--rate 1300] [--reps 3] [--seconds 6] [--markets 100] [--slow 35]
 * BENCH_SERVER=dist runs the compiled service; BENCH_NODE_ARGS adds node flags to it (e.g.
 * --max-semi-space-size=32) to compare collectors' settings.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startPrivateRedis } from './cpu';
import { BENCH_RATE_LIMITS, closedLoop, dropDatabase, fmt, openLoop, percentile, recreateDatabase, seedTradingWorkspace, startServer, stopServer, tradeSender, benchRedisUrl, arg } from './lib';

const RATE = Number(arg('--rate')) || 1300;
const REPS = Number(arg('--reps')) || 3;
const SECONDS = Number(arg('--seconds')) || 6;
const MARKETS = Number(arg('--markets')) || 100;
const SLOW_MS = Number(arg('--slow')) || 35;
const PORT = Number(process.env.BENCH_PORT) || 3955;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6395;
const MASTER = 'bench-master-key-0123456789';
const DB = `mpps_bench_tail${process.env.BENCH_DB_SUFFIX ?? ''}`;
const base = `http://127.0.0.1:${PORT}/api`;

interface Sent {
  at: number; // wall ms when sent
  ms: number;
}
type GcLine = { kind: 'gc'; at: number; ms: number; what: string } | { kind: 'stall'; at: number; ms: number; run: number; wait: number } | { kind: 'old'; at: number; mb: number; busy: number };

function readProbe(file: string): GcLine[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [kind, at, v, what, wait] = l.split(' ');
      if (kind === 'old') return { kind, at: Number(at), mb: Number(v), busy: Number(what) };
      if (kind === 'stall') return { kind, at: Number(at), ms: Number(v), run: Number(what), wait: Number(wait) };
      return { kind: 'gc', at: Number(at), ms: Number(v), what };
    });
}

/** The window's figures and its slow 50 ms slices, each with the probe's lines just before it. */
function report(rep: number, sent: Sent[], probe: GcLine[]): { slices: number; withMarkCompact: number } {
  const lat = sent.map((s) => s.ms).sort((a, b) => a - b);
  const t0 = Math.min(...sent.map((s) => s.at));
  const t1 = Math.max(...sent.map((s) => s.at + s.ms));
  const inWindow = probe.filter((p) => p.at >= t0 && p.at <= t1);
  const gcs = inWindow.filter((p): p is Extract<GcLine, { kind: 'gc' }> => p.kind === 'gc');
  const major = gcs.filter((g) => g.what !== 'scavenge');
  const scavenges = gcs.filter((g) => g.what === 'scavenge');
  const old = inWindow.filter((p): p is Extract<GcLine, { kind: 'old' }> => p.kind === 'old');
  const stalls = inWindow.filter((p): p is Extract<GcLine, { kind: 'stall' }> => p.kind === 'stall');
  const stallMs = (f: (x: Extract<GcLine, { kind: 'stall' }>) => number) => fmt(stalls.reduce((t, x) => t + f(x), 0), 0);
  const grown = old.slice(1).reduce((sum, o, i) => sum + Math.max(0, o.mb - old[i].mb), 0);
  console.log(
    `window ${rep}: ${sent.length} trades, p50 ${fmt(percentile(lat, 50))} ms, p99 ${fmt(percentile(lat, 99))} ms, max ${fmt(lat[lat.length - 1])} ms; ` +
      `scavenges of 1 ms or more ${scavenges.length} (${fmt(scavenges.reduce((s, g) => s + g.ms, 0), 0)} ms); ` +
      `event-loop stalls ${stalls.length} (${stallMs((x) => x.ms)} ms: the main thread on the CPU ${stallMs((x) => x.run)}, queued for one ${stallMs((x) => x.wait)}); ` +
      `old space grew ${fmt(grown, 0)} MB (${fmt((grown * 1024) / sent.length, 1)} KB a trade); ` +
      `event loop busy ${fmt(old.reduce((s, o) => s + o.busy, 0) / Math.max(1, old.length), 2)} (most in a 250 ms step ${fmt(Math.max(0, ...old.map((o) => o.busy)), 2)}); ` +
      `mark-compact work: ${major.map((g) => `${g.what} ${fmt(g.ms)} ms at +${fmt(g.at - t0, 0)}`).join(', ') || 'none'}`,
  );
  const bySlice = new Map<number, number[]>();
  for (const s of sent) {
    const k = Math.floor((s.at - t0) / 50);
    const slice = bySlice.get(k);
    if (slice) slice.push(s.ms);
    else bySlice.set(k, [s.ms]);
  }
  let slices = 0;
  let withMarkCompact = 0;
  for (const [k, v] of [...bySlice].sort((a, b) => a[0] - b[0])) {
    if (Math.max(...v) <= SLOW_MS) continue;
    slices++;
    const from = t0 + k * 50;
    // Stalls, and collections of 3 ms or more, from 60 ms before the slice to its end.
    const near = inWindow.filter((p): p is Exclude<GcLine, { kind: 'old' }> => p.kind !== 'old' && p.at >= from - 60 && p.at < from + 50 && (p.kind === 'stall' || p.ms >= 3));
    if (near.some((p) => p.kind === 'gc' && p.what !== 'scavenge')) withMarkCompact++;
    const sorted = [...v].sort((a, b) => a - b);
    const what = near.map((p) => (p.kind === 'gc' ? `${p.what} ${fmt(p.ms)}` : `stall ${fmt(p.ms)} (cpu ${fmt(p.run)}, queued ${fmt(p.wait)})`)).join(', ');
    console.log(`  +${k * 50} ms: ${v.length} sent, p50 ${fmt(percentile(sorted, 50))}, max ${fmt(sorted[sorted.length - 1])} | ${what || 'nothing on the server'}`);
  }
  return { slices, withMarkCompact };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tail-'));
  const probeFile = join(dir, 'gc.log');
  const url = await recreateDatabase(DB);
  const redis = await startPrivateRedis(REDIS_PORT);
  const env = {
    DATABASE_URL: url,
    REDIS_URL: benchRedisUrl(REDIS_PORT),
    QUEUE_BACKEND: 'redis',
    MASTER_API_KEY: MASTER,
    QUEUE_PREFIX: `tail${Date.now()}`,
    SCHEDULER: 'false',
    ...BENCH_RATE_LIMITS,
    GCPROBE_FILE: probeFile,
  };
  const server = await startServer(env, PORT, undefined, ['--require', resolve('bench/gcprobe.cjs')]);
  try {
    // 64 traders, as bench:trades.
    const seeded = await seedTradingWorkspace(base, MASTER, 64, 'tail');
    const ids = seeded.markets.slice(0, MARKETS);
    const traders = seeded.traders;
    const send = tradeSender(base, traders, (i) => ids[i % ids.length]);
    await closedLoop(8, 3, send); // warm-up
    console.log(`# bench/tail: ${RATE} trades/s over ${ids.length} markets, ${REPS} windows of ${SECONDS} s; slices slower than ${SLOW_MS} ms below each window`);
    const windows: Sent[][] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const sent: Sent[] = [];
      await openLoop(RATE, SECONDS, send, (at, ms) => sent.push({ at, ms }));
      windows.push(sent);
    }
    await new Promise((r) => setTimeout(r, 600)); // the probe's last lines
    const probe = readProbe(probeFile);
    let slices = 0;
    let withMarkCompact = 0;
    windows.forEach((w, rep) => {
      const r = report(rep, w, probe);
      slices += r.slices;
      withMarkCompact += r.withMarkCompact;
    });
    console.log(`\nslow slices: ${slices}, of which ${withMarkCompact} had mark-compact work on the server within 60 ms before or during them`);
  } finally {
    await stopServer(server);
    await stopServer(redis);
    await dropDatabase(DB);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
