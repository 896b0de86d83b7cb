/**
 * Soak (issue 26 item 5): the service as separate processes (npm run api + npm run worker, the
 * worker with its scheduler on), its own database and a private Redis, a webhook receiver subscribed
 * to both workspaces; a short closed-loop ramp finds the saturating rate of the mixed load (buys,
 * sells, metric readings, transfers, proposals and their decisions, early settles with a replacement
 * metric), then the same mix runs open-loop at half that rate for SOAK_MINUTES. Each minute prints
 * ops/s by kind, errors, p50/p99, each process's RSS (/proc VmRSS), Redis used_memory, the largest
 * tables and the database size, and the webhook deliveries received. At the end: the ledger invariant,
 * the first five minutes against the last five (RSS, p99, throughput, table sizes), written to
 * bench/results/soak-latest.json. Not part of npm test.
 *   SOAK_MINUTES=30 npm run bench:soak      (SOAK_MINUTES=2 for a quick run; SOAK_RAMP_SECONDS=90;
 *   SOAK_RATE=<ops/s> skips the ramp and runs at that rate)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Redis } from 'ioredis';
import { checkLedgerInvariant } from '../src/services/ledger';
import { cpuSnapshot, machineBusySeconds, startPrivateRedis } from './cpu';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BENCH_RATE_LIMITS, apiCaller, dropDatabase, fmt, percentile, recreateDatabase, startServer, stopServer, benchRedisUrl } from './lib';

const MINUTES = Number(process.env.SOAK_MINUTES) || 30;
const RAMP_SECONDS = Number(process.env.SOAK_RAMP_SECONDS) || 90;
const FIXED_RATE = Number(process.env.SOAK_RATE) || 0;
const PORT = 3923;
const REDIS_PORT = 6396;
const MASTER = 'bench-master-key-soak-0123456789';
const DB = 'mpps_bench_soak';
const TRADERS = 32;
const METRICS = 20;
const WORKSPACES = 4;
const WS_METRICS = Number(process.env.SOAK_WS_METRICS) || 25;
const MAX_INFLIGHT = 256;
const base = `http://127.0.0.1:${PORT}/api`;
const call = apiCaller(base);
const HOOK_EVENTS = ['market:created', 'market:resolved', 'market:closed', 'metric:updated', 'trade:executed', 'proposal:created', 'proposal:status_changed'];

type Kind = 'buy' | 'sell' | 'reading' | 'transfer' | 'proposal' | 'decision' | 'settle';
/** Weights of the mix; a kind with nothing to act on (no held position, no pending proposal) falls back to a buy. */
const MIX: Array<[Kind, number]> = [
  ['buy', 50],
  ['sell', 15],
  ['reading', 12],
  ['transfer', 10],
  ['proposal', 1.5],
  ['decision', 1.5],
  ['settle', 0.5],
];
const MIX_TOTAL = MIX.reduce((s, [, w]) => s + w, 0);

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)];
const round2 = (x: number) => Math.round(x * 100) / 100;

interface Trader {
  id: string;
  key: string;
  positions: Map<string, { direction: 'higher' | 'lower'; shares: number }>;
}

/** What one minute (or the ramp) saw. */
class Window {
  lat: number[] = [];
  tradeLat: number[] = [];
  byKindLat: Partial<Record<Kind, number[]>> = {};
  ok: Partial<Record<Kind, number>> = {};
  client4xx = 0;
  server5xx = 0;
  network = 0;
  shed = 0;
  codes: Record<string, number> = {};
  record(kind: Kind, ms: number, status: number, code?: string) {
    this.lat.push(ms);
    if (kind === 'buy' || kind === 'sell') this.tradeLat.push(ms);
    (this.byKindLat[kind] ??= []).push(ms);
    if (status >= 200 && status < 300) this.ok[kind] = (this.ok[kind] ?? 0) + 1;
    else {
      if (status >= 500) this.server5xx++;
      else if (status >= 400) this.client4xx++;
      else this.network++;
      const k = `${kind} ${status} ${code ?? ''}`.trim();
      this.codes[k] = (this.codes[k] ?? 0) + 1;
    }
  }
  total() {
    return Object.values(this.ok).reduce((s, n) => s + (n ?? 0), 0);
  }
}

async function main() {
  const started = Date.now();
  const dbUrl = await recreateDatabase(DB);
  const prefix = `benchsoak${Date.now()}`;
  const redisProc = await startPrivateRedis(REDIS_PORT);
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_URL: benchRedisUrl(REDIS_PORT),
    QUEUE_BACKEND: 'redis',
    MASTER_API_KEY: MASTER,
    QUEUE_PREFIX: prefix,
    ...BENCH_RATE_LIMITS,
    // The free-creation limits (issue 26 item 3) would stop the mix's proposals after ten minutes.
    RATE_LIMIT_PROPOSALS_PER_HOUR: '1000000',
    FREE_BOOKS_PER_PARTICIPANT: '1000000',
    WEBHOOK_ALLOW_HTTP: '1',
    WEBHOOK_ALLOW_PRIVATE: '1',
  };
  // Webhook receiver: counts deliveries (by webhook-id, so a retry of one delivery counts once). The ids
  // of the last two minutes are kept (a retry comes within seconds): a set of every id ever seen would
  // grow this process's heap all run long, and its collections would show up as everyone's latency.
  let seen = new Set<string>();
  let seenBefore = new Set<string>();
  const forgetOldIds = setInterval(() => {
    seenBefore = seen;
    seen = new Set();
  }, 60_000);
  let deliveries = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? randomUUID());
      if (!seen.has(id) && !seenBefore.has(id)) {
        seen.add(id);
        deliveries++;
      }
      res.writeHead(200).end();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const procs: Record<string, ChildProcess> = {};
  // Each server writes its heap figures beside RSS (bench/memprobe.cjs): growth in RSS with a flat
  // live heap is memory kept outside it, growth in both is objects kept.
  const probeDir = mkdtempSync(join(tmpdir(), 'soak-mem-'));
  const probe = (role: string) => ({ MEMPROBE_FILE: join(probeDir, `${role}.json`) });
  const probeArgs = ['--require', resolve('bench/memprobe.cjs')];
  procs.api = await startServer({ ...env, ...probe('api'), SCHEDULER: 'false' }, PORT, 'api', probeArgs);
  procs.worker = await startServer({ ...env, ...probe('worker'), SCHEDULER: 'true' }, PORT, 'worker', probeArgs);
  const heapOf = (role: string): Record<string, any> | null => {
    try {
      return JSON.parse(readFileSync(join(probeDir, `${role}.json`), 'utf8'));
    } catch {
      return null;
    }
  };
  const pg = new Client({ connectionString: dbUrl });
  await pg.connect();
  const redis = new Redis(`redis://127.0.0.1:${REDIS_PORT}`);
  try {
    console.log(`# bench/soak: ${MINUTES} min at half the saturating rate; load average ${loadavg()}; pids api ${procs.api.pid} worker ${procs.worker.pid}`);
    // A server with autovacuum off (this machine's CI config) keeps every dead row of the hot rows (hooks,
    // accounts, books): the bench then vacuums its database each minute in autovacuum's place (SOAK_VACUUM=0: never).
    const autovacuum = (await pg.query(`SELECT current_setting('autovacuum') AS v`)).rows[0].v as string;
    const vacuum = process.env.SOAK_VACUUM === '0' ? false : process.env.SOAK_VACUUM === '1' || autovacuum !== 'on';
    console.log(`Postgres autovacuum ${autovacuum}; the bench ${vacuum ? 'vacuums the database once a minute' : 'does not vacuum'}`);
    // ---- the floor
    const master = { 'x-api-key': MASTER };
    const owner = await call('POST', '/agents/register', { name: `soakowner${Date.now() % 1e6}` }, {});
    await call('POST', `/agents/${owner.agentId}/credit`, { amount: 1e9 }, master);
    const ownerKey = { 'x-agent-key': owner.apiKey };
    // Several trading workspaces: a workspace's metric writes run one at a time (an advisory lock), so
    // readings all aimed at one workspace would queue behind each other rather than measure the service.
    const tradingWs: string[] = [];
    for (let i = 0; i < WORKSPACES; i++) tradingWs.push((await call('POST', '/workspaces', { name: `soak trading ${i}`, public: true, defaultLiquidityCredits: 1000 }, ownerKey)).id);
    const pws = await call('POST', '/workspaces', { name: 'soak proposals', public: true, defaultLiquidityCredits: 1000 }, ownerKey);
    const allWs = [...tradingWs, pws.id];
    const asOwnerIn = (w: string) => ({ ...ownerKey, 'x-workspace-id': w });
    const asOwnerP = asOwnerIn(pws.id);
    for (const w of allWs) await call('POST', '/hooks', { url: hookUrl, events: HOOK_EVENTS }, asOwnerIn(w));

    /** Live books by metric; a settle retires a metric and a new one replaces it in its workspace. */
    const booksOf = new Map<string, { ws: string; books: string[] }>();
    const live = new Map<string, string>(); // book -> workspace
    let metricSeq = 0;
    // A settled metric stays in its workspace, and every write of a workspace's metrics loads them all
    // (bench/metrics measures that cost by size). So that the soak measures the service over time and not
    // a workspace growing by ~25 metrics a minute, a workspace takes at most SOAK_WS_METRICS metrics; the
    // next replacement opens a fresh workspace (hooked, every trader joined) that takes its place.
    const metricsIn = new Map<string, number>();
    const successor = new Map<string, Promise<string>>();
    let wsSeq = WORKSPACES;
    const openTradingWorkspace = async () => {
      const w = (await call('POST', '/workspaces', { name: `soak trading ${wsSeq++}`, public: true, defaultLiquidityCredits: 1000 }, ownerKey)).id as string;
      allWs.push(w); // hooked: its events count at the end
      await call('POST', '/hooks', { url: hookUrl, events: HOOK_EVENTS }, asOwnerIn(w));
      for (const t of traders) await call('POST', `/marketplace/${w}/join`, undefined, { 'x-agent-key': t.key });
      return w;
    };
    const homeFor = async (w: string): Promise<string> => {
      const n = metricsIn.get(w) ?? 0;
      if (n < WS_METRICS) {
        metricsIn.set(w, n + 1);
        return w;
      }
      let next = successor.get(w);
      if (!next) successor.set(w, (next = openTradingWorkspace()));
      return homeFor(await next);
    };
    const addMetric = async (w: string) => {
      const m = await call('POST', '/metrics', { name: `soak-m${metricSeq++}`, value: 500 }, asOwnerIn(w));
      const id = (m.metric ?? m).id as string;
      const books: any[] = await call('GET', `/predictions/markets?metricId=${id}&limit=200`, undefined, asOwnerIn(w));
      booksOf.set(id, { ws: w, books: books.map((b) => b.id) });
      for (const b of books) live.set(b.id, w);
      return id;
    };
    for (let i = 0; i < METRICS; i++) await addMetric(await homeFor(tradingWs[i % WORKSPACES]));
    const propMetrics: string[] = [];
    for (let i = 0; i < 2; i++) {
      const m = await call('POST', '/metrics', { name: `soak-p${i}`, value: 500 }, asOwnerP);
      propMetrics.push((m.metric ?? m).id);
    }
    const traders: Trader[] = [];
    for (let i = 0; i < TRADERS; i++) {
      const t = await call('POST', '/agents/register', { name: `soakt${i}x${Date.now() % 1e6}` }, {});
      await call('POST', `/agents/${t.agentId}/credit`, { amount: 1e6 }, master);
      for (const w of allWs) await call('POST', `/marketplace/${w}/join`, undefined, { 'x-agent-key': t.apiKey });
      traders.push({ id: t.agentId, key: t.apiKey, positions: new Map() });
    }
    const pending: string[] = [];
    console.log(`floor: ${METRICS} metrics with ${live.size} open books, ${TRADERS} traders, ${allWs.length} workspaces hooked to ${hookUrl}`);

    // ---- one operation of the mix
    let window = new Window();
    const send = async (kind: Kind, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const t0 = performance.now();
      let status = 0;
      let json: any = null;
      try {
        const r = await fetch(`${base}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        status = r.status;
        json = status === 204 ? null : await r.json().catch(() => null);
      } catch {
        status = 0;
      }
      window.record(kind, performance.now() - t0, status, json?.code);
      return status >= 200 && status < 300 ? (json ?? {}) : null;
    };
    const trade = async (kind: 'buy' | 'sell') => {
      const t = pick(traders);
      const held = [...t.positions].filter(([id, p]) => live.has(id) && p.shares > 0.00001);
      let marketId: string;
      let body: Record<string, unknown>;
      if (kind === 'sell' && held.length) {
        const [id, p] = pick(held);
        marketId = id;
        body = { marketId: id, direction: p.direction, sellShares: Math.max(0.000001, Math.floor(p.shares * (Math.random() < 0.3 ? 1 : 0.5) * 1e6) / 1e6) };
      } else {
        // Every book settled and no replacement made yet (its creation timed out): nothing to buy now.
        if (!live.size) return;
        marketId = pick([...live.keys()]);
        body = { marketId, direction: Math.random() < 0.5 ? 'higher' : 'lower', amount: round2(0.5 + Math.random() * 5) };
      }
      const h = { 'x-agent-key': t.key, 'x-workspace-id': live.get(marketId)!, 'idempotency-key': `soak-${randomUUID()}` };
      const r = await send(held.length && kind === 'sell' ? 'sell' : 'buy', 'POST', '/predictions/trade', h, body);
      const pos = r?.position;
      if (pos?.direction) t.positions.set(marketId, { direction: pos.direction, shares: pos.shares });
      else if (r) t.positions.delete(marketId);
    };
    const ops: Record<Kind, () => Promise<void>> = {
      buy: () => trade('buy'),
      sell: () => trade('sell'),
      reading: async () => {
        const [id, { ws }] = pick([...booksOf]);
        await send('reading', 'PUT', `/metrics/${id}`, asOwnerIn(ws), { value: Math.round(300 + Math.random() * 400) });
      },
      transfer: async () => {
        const from = pick(traders);
        const to = pick(traders.filter((t) => t !== from));
        await send('transfer', 'POST', '/agents/transfer', { 'x-agent-key': from.key, 'idempotency-key': `soak-${randomUUID()}` }, { toAgent: to.id, amount: round2(0.1 + Math.random() * 2), memo: 'soak' });
      },
      proposal: async () => {
        const t = pick(traders);
        const p = await send('proposal', 'POST', '/proposals', { 'x-agent-key': t.key, 'x-workspace-id': pws.id }, { title: `soak proposal ${randomUUID().slice(0, 8)}`, metricIds: [pick(propMetrics)], liquidity: 5 });
        if (p?.id) pending.push(p.id);
      },
      decision: async () => {
        const id = pending.shift();
        if (!id) return trade('buy');
        await send('decision', 'POST', `/proposals/${id}/${Math.random() < 0.5 ? 'approve' : 'decline'}`, { ...master, 'x-workspace-id': pws.id }, {});
      },
      settle: async () => {
        // The oldest metric settles early (all its books resolve and pay out); a new one takes its place.
        const [id, { ws, books }] = booksOf.entries().next().value!;
        booksOf.delete(id);
        for (const b of books) live.delete(b);
        // A retired book's positions are of no further use to the mix: keeping them would make every
        // sell's scan of a trader's positions grow all run long (the load client's cost, not the service's).
        for (const t of traders) for (const b of books) t.positions.delete(b);
        await send('settle', 'POST', `/metrics/${id}/settle`, { ...master, 'x-workspace-id': ws }, { value: Math.round(200 + Math.random() * 600), reason: 'soak settles early' });
        await homeFor(ws).then(addMetric).catch((err: Error) => void window.record('settle', 0, 0, `replacement metric: ${err.message.slice(0, 80)}`));
      },
    };
    const drawKind = (): Kind => {
      let x = Math.random() * MIX_TOTAL;
      for (const [k, w] of MIX) if ((x -= w) < 0) return k;
      return 'buy';
    };
    let inflight = 0;
    const fire = () => {
      if (inflight >= MAX_INFLIGHT) {
        window.shed++;
        return null;
      }
      inflight++;
      return ops[drawKind()]()
        .catch(() => void window.network++)
        .finally(() => inflight--);
    };

    // ---- step 1: ramp (closed loop, growing concurrency): the saturating rate of the mix
    let rate = FIXED_RATE;
    const ramp: Array<{ concurrency: number; opsPerSecond: number; p50: number; p99: number; errors: number }> = [];
    if (!rate) {
      for (const c of [2, 8, 24]) {
        window = new Window();
        const until = performance.now() + (RAMP_SECONDS * 1000) / 3;
        const t0 = performance.now();
        await Promise.all(Array.from({ length: c }, async () => {
          while (performance.now() < until) await fire();
        }));
        const s = (performance.now() - t0) / 1000;
        window.lat.sort((a, b) => a - b);
        const step = { concurrency: c, opsPerSecond: window.total() / s, p50: percentile(window.lat, 50), p99: percentile(window.lat, 99), errors: window.client4xx + window.server5xx + window.network };
        ramp.push(step);
        console.log(`ramp: ${c} clients -> ${fmt(step.opsPerSecond)} ops/s, p50 ${fmt(step.p50)} ms, p99 ${fmt(step.p99)} ms, errors ${step.errors} ${JSON.stringify(window.codes)}`);
      }
      rate = Math.max(...ramp.map((r) => r.opsPerSecond)) / 2;
    }
    console.log(`soak rate: ${fmt(rate)} ops/s (half the saturating rate) for ${MINUTES} min`);
    await new Promise((r) => setTimeout(r, 5000)); // let the ramp's backlog (webhooks, jobs) drain

    // ---- step 2: open loop at `rate`, one line a minute
    console.log('\n| min | ops/s | 2xx by kind (per minute) | 4xx | 5xx | net/shed | p50 ms | p99 ms | trade p99 | RSS api MB | heap api used (min of the minute)/reserved MB | RSS worker MB | heap worker used (min)/reserved MB | Redis MB | db MB | largest tables MB | webhooks/s |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    const minutes: any[] = [];
    const codes: Record<string, number> = {};
    const all = new Set<Promise<void>>();
    const soakStart = performance.now();
    let deliveriesAtMinute = deliveries;
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpuNow = () => ({ ...cpuSnapshot({ servers: { api: procs.api.pid!, worker: procs.worker.pid! }, db: DB, redisPid: redisProc.pid }), machine: machineBusySeconds() });
    let cpuBefore: Record<string, number> = cpuNow();
    let lastVacuumMs = 0;
    let ioBefore = await pgIo(pg);
    let i = 0;
    window = new Window();
    for (let minute = 1; minute <= MINUTES; minute++) {
      const minuteEnd = soakStart + minute * 60_000;
      for (;;) {
        const due = soakStart + (i * 1000) / rate;
        if (due >= minuteEnd) break;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        i++;
        const p = fire();
        if (p) {
          all.add(p);
          void p.finally(() => all.delete(p));
        }
      }
      const wait = minuteEnd - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const w = window;
      window = new Window();
      const row = await sample(minute, w, pg, redis, procs, deliveries - deliveriesAtMinute, heapOf);
      // Where the machine's CPU went this minute (seconds per minute), and this load client's own event-loop
      // delay: if the client stalls, every kind's latency rises together and it is not the service.
      const cpu = cpuNow();
      row.cpuSecondsPerMinute = delta(cpu, cpuBefore);
      cpuBefore = cpu;
      // Postgres's own writes and reads this minute: checkpoints (timed or forced by WAL volume), pages the
      // backends had to write out themselves to find a free buffer, and reads that missed shared_buffers.
      const ioNow = await pgIo(pg);
      row.pgPerMinute = delta(ioNow, ioBefore);
      ioBefore = ioNow;
      row.clientLoopDelayMs = { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
      loopDelay.reset();
      console.log(`   postgres this minute: ${Object.entries(row.pgPerMinute).map(([k, v]) => `${k} ${v}`).join(', ')}`);
      console.log(`   cpu s/min: ${Object.entries(row.cpuSecondsPerMinute).map(([k, v]) => `${k} ${fmt(v as number)}`).join(', ')}; client loop delay p99 ${fmt(row.clientLoopDelayMs.p99)} ms, max ${fmt(row.clientLoopDelayMs.max)} ms; previous VACUUM ${fmt(lastVacuumMs)} ms`);
      if (vacuum) {
        const t0 = performance.now();
        await pg.query('VACUUM');
        row.vacuumMs = lastVacuumMs = performance.now() - t0;
      }
      deliveriesAtMinute = deliveries;
      for (const [k, n] of Object.entries(w.codes)) codes[k] = (codes[k] ?? 0) + n;
      minutes.push(row);
    }
    await Promise.allSettled([...all]);
    const soakSeconds = (performance.now() - soakStart) / 1000;

    // ---- the end: webhook backlog, the ledger, first against last
    const drainFrom = Date.now();
    let last = -1;
    while (Date.now() - drainFrom < 60_000 && deliveries !== last) {
      last = deliveries;
      await new Promise((r) => setTimeout(r, 3000));
    }
    const [{ n: events }] = (await pg.query(`SELECT count(*)::int AS n FROM outbox WHERE workspace_id = ANY($1) AND type = ANY($2)`, [allWs, HOOK_EVENTS])).rows;
    const ds = new DataSource({ type: 'postgres', url: dbUrl });
    await ds.initialize();
    const inv = await checkLedgerInvariant(ds);
    await ds.destroy();
    const k = Math.min(5, Math.floor(minutes.length / 2)) || 1;
    // Garbage collection per minute (the probe's counters are cumulative): pause time and collections.
    minutes.forEach((r, n) => {
      for (const role of Object.keys(procs)) {
        const now = r.heapMb[role]?.gcs;
        const before = n ? minutes[n - 1].heapMb[role]?.gcs : undefined;
        r.gcPerMinute = { ...r.gcPerMinute, [role]: now && before ? delta(now, before) : null };
      }
    });
    const first = minutes.slice(0, k);
    const lastK = minutes.slice(-k);
    const mean = (rows: any[], f: (r: any) => number) => {
      const xs = rows.map(f).filter((x) => !Number.isNaN(x));
      return xs.reduce((s, x) => s + x, 0) / xs.length;
    };
    const compare = (f: (r: any) => number) => {
      const a = mean(first, f);
      const b = mean(lastK, f);
      return { first: a, last: b, ratio: b / a };
    };
    const summary = {
      opsPerSecond: compare((r) => r.opsPerSecond),
      p50: compare((r) => r.p50),
      p99: compare((r) => r.p99),
      tradeP99: compare((r) => r.tradeP99),
      rssApiMb: compare((r) => r.rssMb.api),
      rssWorkerMb: compare((r) => r.rssMb.worker),
      heapMinUsedApiMb: compare((r) => r.heapMb.api?.usedMin ?? NaN),
      heapReservedApiMb: compare((r) => r.heapMb.api?.total ?? NaN),
      externalApiMb: compare((r) => r.heapMb.api?.external ?? NaN),
      gcMsPerMinApi: compare((r) => r.gcPerMinute?.api?.ms ?? NaN),
      gcCountPerMinApi: compare((r) => r.gcPerMinute?.api?.count ?? NaN),
      heapMinUsedWorkerMb: compare((r) => r.heapMb.worker?.usedMin ?? NaN),
      heapReservedWorkerMb: compare((r) => r.heapMb.worker?.total ?? NaN),
      redisMb: compare((r) => r.redisMb),
      dbMb: compare((r) => r.dbMb),
      webhooksPerSecond: compare((r) => r.webhooksPerSecond),
      cpuApiSPerMin: compare((r) => r.cpuSecondsPerMinute.api ?? NaN),
      cpuWorkerSPerMin: compare((r) => r.cpuSecondsPerMinute.worker ?? NaN),
      cpuRedisSPerMin: compare((r) => r.cpuSecondsPerMinute.redis ?? NaN),
      cpuClientSPerMin: compare((r) => r.cpuSecondsPerMinute.client ?? NaN),
      cpuMachineSPerMin: compare((r) => r.cpuSecondsPerMinute.machine ?? NaN),
      clientLoopDelayP99: compare((r) => r.clientLoopDelayMs.p99),
      vacuumMs: compare((r) => r.vacuumMs ?? NaN),
      pgBackendWritesPerMin: compare((r) => r.pgPerMinute.buffers_backend ?? NaN),
      pgCheckpointWritesPerMin: compare((r) => r.pgPerMinute.buffers_checkpoint ?? NaN),
      pgBlockReadsPerMin: compare((r) => r.pgPerMinute.blks_read ?? NaN),
      pgForcedCheckpointsPerMin: compare((r) => r.pgPerMinute.forced_checkpoints ?? NaN),
    };
    const kinds = MIX.map(([kind]) => kind);
    const p99ByKind = Object.fromEntries(kinds.map((kind) => [kind, compare((r) => r.p99ByKind[kind] ?? NaN)]));
    const firstTables = minutes[0].tablesMb as Record<string, number>;
    const lastTables = minutes[minutes.length - 1].tablesMb as Record<string, number>;
    console.log(`\n## summary: mean of the first ${k} minutes against the last ${k} (ratio last/first)`);
    for (const [name, s] of Object.entries({ ...summary, ...Object.fromEntries(Object.entries(p99ByKind).map(([kind, v]) => [`p99 ${kind}`, v])) })) console.log(`${name.padEnd(18)} ${fmt(s.first).padStart(9)} -> ${fmt(s.last).padStart(9)}  (x${fmt(s.ratio, 2)})`);
    // The ten largest, and any other table over 1 MB that grew more than threefold (hot rows' dead versions).
    const shown = Object.keys(lastTables).filter((t, n) => n < 10 || (lastTables[t] > 1 && lastTables[t] > 3 * (firstTables[t] ?? 0)));
    console.log(`tables MB, minute 1 -> minute ${minutes.length}: ${shown.map((t) => `${t} ${fmt(firstTables[t] ?? 0)} -> ${fmt(lastTables[t])}`).join(', ')}`);
    console.log(`requests: ${i} sent in ${fmt(soakSeconds, 0)} s; not 2xx: ${JSON.stringify(codes)}`);
    console.log(`webhooks: ${deliveries} deliveries received, ${events} events written to the hooked workspaces (ramp included)`);
    console.log(`ledger invariant: ${inv.ok ? 'holds' : `BROKEN ${JSON.stringify({ ...inv, total: inv.total.toString() })}`}`);
    console.log(`load average at the end ${loadavg()}; the machine is shared, so absolute latency is noisy`);
    const out = {
      at: new Date().toISOString(),
      minutes: MINUTES,
      rate,
      vacuumEachMinute: vacuum,
      ramp,
      perMinute: minutes,
      summary,
      p99ByKind,
      firstTablesMb: firstTables,
      lastTablesMb: lastTables,
      notOk: codes,
      webhooks: { received: deliveries, events },
      ledgerInvariant: inv.ok,
      wallSeconds: (Date.now() - started) / 1000,
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/soak-latest.json', `${JSON.stringify(out, null, 2)}\n`);
    console.log('figures written to bench/results/soak-latest.json');
    if (!inv.ok) process.exitCode = 1;
  } finally {
    await pg.end();
    redis.disconnect();
    for (const p of Object.values(procs)) await stopServer(p);
    receiver.close();
    clearInterval(forgetOldIds);
    await stopServer(redisProc);
    if (!process.env.BENCH_KEEP) await dropDatabase(DB);
  }
}

function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** One minute's line: load figures from `w`, the processes' RSS, Redis memory and the largest tables. */
async function sample(minute: number, w: Window, pg: Client, redis: Redis, procs: Record<string, ChildProcess>, delivered: number, heapOf: (role: string) => Record<string, any> | null) {
  w.lat.sort((a, b) => a - b);
  w.tradeLat.sort((a, b) => a - b);
  const tables = (
    await pg.query(
      `SELECT relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC`,
    )
  ).rows.map((r) => [r.name as string, Number(r.bytes) / 2 ** 20] as const);
  const dbMb = Number((await pg.query('SELECT pg_database_size(current_database()) AS b')).rows[0].b) / 2 ** 20;
  const redisMb = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN) / 2 ** 20;
  const row = {
    minute,
    opsPerSecond: w.total() / 60,
    byKind: w.ok,
    client4xx: w.client4xx,
    server5xx: w.server5xx,
    networkOrShed: w.network + w.shed,
    p50: percentile(w.lat, 50),
    p99: percentile(w.lat, 99),
    tradeP99: percentile(w.tradeLat, 99),
    p99ByKind: Object.fromEntries(Object.entries(w.byKindLat).map(([k, xs]) => [k, percentile(xs.sort((a, b) => a - b), 99)])),
    rssMb: Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, rssMb(p.pid)])),
    // MB: V8's heap (used now, the last minute's smallest and largest used, reserved), Buffers and other
    // memory outside it, and the process's own malloc arena use by V8; GC count and pause so far.
    heapMb: Object.fromEntries(
      Object.keys(procs).map((k) => {
        const h = heapOf(k);
        const mb = (n: number | undefined) => (n === undefined ? NaN : n / 2 ** 20);
        return [k, h ? { used: mb(h.heapUsed), usedMin: mb(h.minHeapUsed), usedMax: mb(h.maxHeapUsed), total: mb(h.heapTotal), external: mb(h.external), arrayBuffers: mb(h.arrayBuffers), malloced: mb(h.mallocedMemory), maxRss: mb(h.maxRss), gcs: h.gcs } : null];
      }),
    ) as Record<string, { used: number; usedMin: number; usedMax: number; total: number; external: number; arrayBuffers: number; malloced: number; maxRss: number; gcs: Record<string, number> } | null>,
    redisMb,
    dbMb,
    tablesMb: Object.fromEntries(tables),
    webhooksPerSecond: delivered / 60,
    vacuumMs: undefined as number | undefined,
    cpuSecondsPerMinute: {} as Record<string, number>,
    pgPerMinute: {} as Record<string, number>,
    clientLoopDelayMs: { p99: NaN, max: NaN },
  };
  const kinds = Object.entries(row.byKind).map(([k, n]) => `${k} ${n}`).join(' ');
  const tbl = tables.slice(0, 6).map(([n, mb]) => `${n} ${fmt(mb)}`).join(', ');
  const heap = (k: string) => {
    const h = row.heapMb[k];
    return h ? `${fmt(h.usedMin)}/${fmt(h.total)} ext ${fmt(h.external)}` : '-';
  };
  console.log(
    `| ${minute} | ${fmt(row.opsPerSecond)} | ${kinds} | ${w.client4xx} | ${w.server5xx} | ${row.networkOrShed} | ${fmt(row.p50)} | ${fmt(row.p99)} | ${fmt(row.tradeP99)} | ${fmt(row.rssMb.api)} | ${heap('api')} | ${fmt(row.rssMb.worker)} | ${heap('worker')} | ${fmt(redisMb)} | ${fmt(dbMb)} | ${tbl} | ${fmt(row.webhooksPerSecond)} |`,
  );
  return row;
}

/** What each cumulative counter gained since `before`. */
function delta(now: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

/** Postgres counters (cumulative): the server's checkpoints and buffer writes, and this database's block reads and hits. */
async function pgIo(pg: Client): Promise<Record<string, number>> {
  const [b] = (
    await pg.query(`SELECT checkpoints_timed + checkpoints_req AS checkpoints, checkpoints_req AS forced_checkpoints, buffers_checkpoint, buffers_clean,
                           buffers_backend, d.blks_read, d.blks_hit
                      FROM pg_stat_bgwriter, pg_stat_database d WHERE d.datname = current_database()`)
  ).rows;
  return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Number(v)]));
}

function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
