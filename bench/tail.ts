/**
 * What sets the p99 at a steady open load (issue 29's "half the saturating rate"): each request's
 * latency as a time series, lined up with the server's garbage collections and event-loop stalls
 * (bench/gcprobe.cjs). Prints, per window of the load, p50 / p99 / max and the mark-compacts in it,
 * then the 50 ms slices whose slowest request took over --slow ms and what the server's heap did
 * within 60 ms before them, and how busy its event loop was. One all-in-one server, queues on a private Redis. Not part of npm test.
 *   npx tsx bench/tail.ts [--rate 1300] [--reps 3] [--seconds 6] [--markets 100] [--slow 35]
 *                         [--warm-clients 8] [--warm-seconds 3] [--pg-waits] [--disk-probe DIR]
 * --pg-waits samples Postgres's wait events every 10 ms (this database's backends and the WAL
 * writer) and lines up each wait of 10 ms or more (a WAL flush, a lock) with the slow slices;
 * --disk-probe DIR flushes 8 kB to a file in DIR every 10 ms from a process of its own
 * (bench/diskprobe.cjs) and lines up each flush of 5 ms or more: the disk's own moments, beside
 * Postgres's. Both load the machine a little. BENCH_SERVER=dist runs the compiled service;
 * BENCH_NODE_ARGS adds node flags to it (e.g. --max-semi-space-size=32) to compare collectors' settings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { startPrivateRedis } from './cpu';
import { BENCH_RATE_LIMITS, closedLoop, dropDatabase, fmt, openLoop, percentile, recreateDatabase, seedTradingWorkspace, startServer, stopServer, tradeSender, benchRedisUrl, arg } from './lib';

const RATE = Number(arg('--rate')) || 1300;
const REPS = Number(arg('--reps')) || 3;
const SECONDS = Number(arg('--seconds')) || 6;
const MARKETS = Number(arg('--markets')) || 100;
const SLOW_MS = Number(arg('--slow')) || 35;
const WARM_CLIENTS = Number(arg('--warm-clients')) || 8;
const WARM_SECONDS = Number(arg('--warm-seconds')) || 3;
const PG_WAITS = process.argv.includes('--pg-waits');
const DISK_DIR = arg('--disk-probe');
const PORT = Number(process.env.BENCH_PORT) || 3955;
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT) || 6395;
const MASTER = 'bench-master-key-0123456789';
const DB = `mpps_bench_tail${process.env.BENCH_DB_SUFFIX ?? ''}`;
const base = `http://127.0.0.1:${PORT}/api`;

interface Sent {
  at: number; // wall ms when sent
  ms: number;
}
type GcLine =
  | { kind: 'gc'; at: number; ms: number; what: string }
  | { kind: 'stall'; at: number; ms: number; run: number; wait: number }
  | { kind: 'old'; at: number; mb: number; busy: number }
  // A Postgres backend's wait of 10 ms or more (--pg-waits), and a probe's disk flush of 5 ms or more (--disk-probe).
  | { kind: 'pgwait'; at: number; ms: number; what: string }
  | { kind: 'disk'; at: number; ms: number };
type Near = Exclude<GcLine, { kind: 'old' }>;
/** When a line's moment ends: a Postgres wait or a disk flush lasts `ms` from `at`; the others are marked at their end. */
const endOf = (p: GcLine) => p.at + (p.kind === 'pgwait' || p.kind === 'disk' ? p.ms : 0);

const PG_SAMPLE_MS = 10;

/**
 * Samples pg_stat_activity every 10 ms (or as often as its query answers) until stopped: each
 * (backend, wait event) seen in a row of samples is one wait, at least as long as its first sample
 * to its last. Client reads (a backend waiting for its client) and idle processes are not waits of
 * Postgres's own. Returns the waits of 10 ms or more (seen in two samples or more): a wait shorter
 * than two sample periods may fall between samples and be missed. stop() prints the mean period.
 */
function samplePgWaits(url: string): { stop: () => Promise<GcLine[]> } {
  const client = new Client({ connectionString: url });
  const found: GcLine[] = [];
  const open = new Map<string, { from: number; last: number; what: string }>();
  let running = true;
  let samples = 0;
  let firstAt = 0;
  let lastAt = 0;
  const close = (key: string, w: { from: number; last: number; what: string }) => {
    open.delete(key);
    // A backend's wait lasted at least this long: seen in samples this far apart (one seen once may have lasted microseconds).
    const ms = w.last - w.from;
    if (ms >= 10) found.push({ kind: 'pgwait', at: w.from, ms, what: w.what });
  };
  client.on('error', () => undefined); // a connection ended under it (the database dropped) surfaces as the loop's failure
  const loop = (async () => {
    await client.connect();
    const db = new URL(url).pathname.slice(1);
    while (running) {
      const now = performance.timeOrigin + performance.now();
      if (!samples++) firstAt = now;
      lastAt = now;
      const { rows } = await client.query<{ pid: number; backend_type: string; wait: string; query: string; started: string | null }>(
        `SELECT pid, backend_type, wait_event_type || ':' || wait_event AS wait, left(query, 24) AS query, query_start::text AS started FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND (datname = $1 OR backend_type = 'walwriter')
            AND wait_event IS NOT NULL AND wait_event_type NOT IN ('Activity', 'Client')`,
        [db],
      );
      const seen = new Set<string>();
      for (const r of rows) {
        // One statement's wait: the same backend's next statement (another COMMIT) is another wait. The WAL writer runs no statements: its flushes seen in a row merge.
        const key = `${r.pid} ${r.wait} ${r.started ?? ''}`;
        seen.add(key);
        const w = open.get(key);
        if (w) w.last = now;
        else open.set(key, { from: now, last: now, what: `${r.backend_type === 'walwriter' ? 'walwriter' : 'backend'} ${r.wait}${r.query ? ` (${r.query.trim().split(/\s+/)[0]})` : ''}` });
      }
      for (const [key, w] of open) if (!seen.has(key)) close(key, w);
      // The next sample 10 ms after this one began, not after its answer.
      await new Promise((res) => setTimeout(res, Math.max(0, PG_SAMPLE_MS - (performance.timeOrigin + performance.now() - now))));
    }
  })();
  const ended = loop.then(
    () => null,
    (err: Error) => err,
  );
  return {
    stop: async () => {
      running = false;
      // A sample that never answers must not hold the bench's cleanup: ending the client fails it.
      const quick = await Promise.race([ended, new Promise<'slow'>((res) => setTimeout(() => res('slow'), 1000))]);
      await client.end().catch(() => undefined);
      const err = quick === 'slow' ? await ended : quick;
      for (const [key, w] of open) close(key, w);
      if (err) console.log(`the Postgres wait sampler stopped early: ${err.message}; its waits are partial`);
      if (samples > 1) console.log(`the Postgres wait sampler: ${samples} samples, one every ${fmt((lastAt - firstAt) / (samples - 1), 1)} ms on average`);
      return found;
    },
  };
}

/** The disk probe's flushes of 5 ms or more (bench/diskprobe.cjs writes every one), and a summary of all of them. */
function readDisk(file: string): { lines: GcLine[]; summary?: string } {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { lines: [] };
  }
  const all = text
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '))
    .map(([, at, ms]) => ({ kind: 'disk' as const, at: Number(at), ms: Number(ms) }));
  if (!all.length) return { lines: [] };
  const sorted = all.map((d) => d.ms).sort((a, b) => a - b);
  const summary = `${sorted.length} flushes of 8 kB, p50 ${fmt(percentile(sorted, 50), 2)} ms, p99 ${fmt(percentile(sorted, 99), 2)} ms, max ${fmt(sorted[sorted.length - 1])} ms`;
  return { lines: all.filter((d) => d.ms >= 5), summary };
}

const nearText = (p: Near) =>
  p.kind === 'gc' ? `${p.what} ${fmt(p.ms)}` : p.kind === 'stall' ? `stall ${fmt(p.ms)} (cpu ${fmt(p.run)}, queued ${fmt(p.wait)})` : p.kind === 'pgwait' ? `pg ${p.what} ${fmt(p.ms, 0)}` : `disk flush ${fmt(p.ms)}`;

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
function report(rep: number, sent: Sent[], probe: GcLine[]): { slices: number; withMarkCompact: number; withFlush: number; withNothing: number } {
  const lat = sent.map((s) => s.ms).sort((a, b) => a - b);
  const t0 = Math.min(...sent.map((s) => s.at));
  const t1 = Math.max(...sent.map((s) => s.at + s.ms));
  // A Postgres wait or a disk flush that began before the window and lasted into it belongs to it too.
  const inWindow = probe.filter((p) => endOf(p) >= t0 && p.at <= t1);
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
      `mark-compact work: ${major.map((g) => `${g.what} ${fmt(g.ms)} ms at +${fmt(g.at - t0, 0)}`).join(', ') || 'none'}` +
      (PG_WAITS ? `; Postgres waits of 10 ms or more ${pgWaitsOf(inWindow)}` : '') +
      (DISK_DIR ? `; probe's disk flushes of 5 ms or more ${diskOf(inWindow)}` : ''),
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
  let withFlush = 0;
  let withNothing = 0;
  for (const [k, v] of [...bySlice].sort((a, b) => a[0] - b[0])) {
    if (Math.max(...v) <= SLOW_MS) continue;
    slices++;
    const from = t0 + k * 50;
    // Stalls, collections of 3 ms or more, Postgres's waits and slow disk flushes, from 60 ms before the slice to its end (a wait that began earlier and lasted into it counts).
    const near = inWindow.filter((p): p is Near => p.kind !== 'old' && endOf(p) >= from - 60 && p.at < from + 50 && (p.kind !== 'gc' || p.ms >= 3));
    if (near.some((p) => p.kind === 'gc' && p.what !== 'scavenge')) withMarkCompact++;
    if (near.some((p) => (p.kind === 'pgwait' && /WAL/.test(p.what)) || p.kind === 'disk')) withFlush++;
    if (!near.length) withNothing++;
    const sorted = [...v].sort((a, b) => a - b);
    console.log(`  +${k * 50} ms: ${v.length} sent, p50 ${fmt(percentile(sorted, 50))}, max ${fmt(sorted[sorted.length - 1])} | ${near.map(nearText).join(', ') || 'nothing seen'}`);
  }
  return { slices, withMarkCompact, withFlush, withNothing };
}

function pgWaitsOf(lines: GcLine[]): string {
  const waits = lines.filter((p): p is Extract<GcLine, { kind: 'pgwait' }> => p.kind === 'pgwait');
  const by = new Map<string, number[]>();
  for (const w of waits) {
    const kind = w.what.replace(/ \(.*\)$/, ''); // without the statement
    by.set(kind, [...(by.get(kind) ?? []), w.ms]);
  }
  return `${waits.length}${by.size ? ` (${[...by].map(([k, ms]) => `${k} ${ms.length}, longest ${fmt(Math.max(...ms), 0)} ms`).join('; ')})` : ''}`;
}

function diskOf(lines: GcLine[]): string {
  const ms = lines.filter((p) => p.kind === 'disk').map((p) => (p as { ms: number }).ms);
  return `${ms.length}${ms.length ? ` (longest ${fmt(Math.max(...ms))} ms, ${ms.filter((x) => x >= 20).length} of 20 ms or more)` : ''}`;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tail-'));
  const probeFile = join(dir, 'gc.log');
  const diskFile = join(dir, 'disk.log');
  let disk: ChildProcess | null = null;
  let pgWaits: ReturnType<typeof samplePgWaits> | null = null;
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
    await closedLoop(WARM_CLIENTS, WARM_SECONDS, send); // warm-up
    console.log(
      `# bench/tail: ${RATE} trades/s over ${ids.length} markets, ${REPS} windows of ${SECONDS} s after ${WARM_SECONDS} s at ${WARM_CLIENTS} clients; slices slower than ${SLOW_MS} ms below each window`,
    );
    pgWaits = PG_WAITS ? samplePgWaits(url) : null;
    disk = DISK_DIR ? spawn(process.execPath, [resolve('bench/diskprobe.cjs'), DISK_DIR, diskFile], { stdio: 'inherit' }) : null;
    const windows: Sent[][] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const sent: Sent[] = [];
      await openLoop(RATE, SECONDS, send, (at, ms) => sent.push({ at, ms }));
      windows.push(sent);
    }
    await new Promise((r) => setTimeout(r, 600)); // the probe's last lines
    const waits = pgWaits ? await pgWaits.stop() : [];
    pgWaits = null;
    if (disk && (disk.exitCode !== null || disk.signalCode !== null)) console.log(`the disk probe ended early (exit ${disk.exitCode ?? disk.signalCode}): its flushes are partial or missing`);
    if (disk) await stopServer(disk);
    disk = null;
    const diskLines = readDisk(diskFile);
    if (DISK_DIR && !diskLines.summary) console.log('the disk probe recorded no flush (is DIR writable?)');
    const probe = [...readProbe(probeFile), ...waits, ...diskLines.lines].sort((a, b) => a.at - b.at);
    const total = { slices: 0, withMarkCompact: 0, withFlush: 0, withNothing: 0 };
    windows.forEach((w, rep) => {
      const r = report(rep, w, probe);
      for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += r[k];
    });
    console.log(`\nslow slices: ${total.slices}, of which ${total.withMarkCompact} had mark-compact work on the server within 60 ms before or during them`);
    if (PG_WAITS || DISK_DIR) console.log(`  ${total.withFlush} had a Postgres WAL wait or a slow probe flush near them; ${total.withNothing} had nothing seen near them`);
    if (diskLines.summary) console.log(`the disk probe: ${diskLines.summary}`);
  } finally {
    if (pgWaits) await pgWaits.stop();
    if (disk) await stopServer(disk);
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
