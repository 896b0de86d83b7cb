import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { Client } from 'pg';
import { parseRedisUrl } from '../src/redisUrl';

export const PG_BASE = process.env.BENCH_PG_BASE ?? 'postgres://postgres@127.0.0.1:5432';

/**
 * BENCH_SOCKETS=1: the servers reach Postgres (its socket directory: BENCH_PG_SOCKET_DIR, default
 * /var/run/postgresql) and the bench's private Redis by unix sockets, not loopback TCP, and so
 * does pgbench: a round trip on one host then skips the TCP stack on both ends.
 */
export const BENCH_SOCKETS = process.env.BENCH_SOCKETS === '1';
const PG_SOCKET_DIR = process.env.BENCH_PG_SOCKET_DIR ?? '/var/run/postgresql';

/** The private Redis's socket (startPrivateRedis listens on it too). */
export const redisSocketPath = (port: number) => `/tmp/bench-redis-${port}.sock`;

/** How a run reached Postgres and Redis, as the benches print it (and bench/compare.ts, from a run's `sockets`). */
export const transportName = (sockets: boolean) => (sockets ? 'unix sockets (BENCH_SOCKETS=1)' : 'loopback TCP');

/** The REDIS_URL of a bench's private Redis on this port (by its socket under BENCH_SOCKETS). */
export const benchRedisUrl = (port: number) => (BENCH_SOCKETS ? `unix://${redisSocketPath(port)}` : `redis://127.0.0.1:${port}`);

/** A database's URL, by the socket under BENCH_SOCKETS (the bench's own connections and the servers' the same way). */
const dbUrl = (name: string) => (BENCH_SOCKETS ? `${PG_BASE}/${name}?host=${PG_SOCKET_DIR}` : `${PG_BASE}/${name}`);

export async function recreateDatabase(name: string): Promise<string> {
  await withDb(dbUrl('postgres'), async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  return dbUrl(name);
}

export async function dropDatabase(name: string): Promise<void> {
  await withDb(dbUrl('postgres'), (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** A bench's entry: runs `main`, prints the targets it missed (FAILED: ...), and exits non-zero then or on an error. */
export function runBench(main: () => Promise<string[]>): void {
  main().then(
    (failures) => {
      if (!failures.length) return;
      console.log(`\nFAILED: ${failures.join('; ')}`);
      process.exitCode = 1;
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** The limits a bench's server runs with: its seeding registers many agents and its load sends from few keys. */
/** Every request limit raised for a benchmark's run (a limit would answer 429 and measure nothing). */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_REGISTER_PER_HOUR: '100000',
  RATE_LIMIT_KEY_PER_MINUTE: '10000000',
  RATE_LIMIT_PARTICIPANT_PER_MINUTE: '10000000',
};

/** Start `npm start`'s entry as a child process and wait until it answers. */
export async function startServer(env: Record<string, string>, port: number, role?: 'api' | 'worker', nodeArgs: string[] = []): Promise<ChildProcess> {
  // BENCH_NODE_ARGS, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof', profiles the server.
  const extra = [...nodeArgs, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  // BENCH_SERVER=dist runs the compiled service as `npm start` does (run `npm run build` first);
  // otherwise the sources through tsx (its loader thread adds memory, not per-request work).
  const entry = process.env.BENCH_SERVER === 'dist' ? ['dist/src/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, [...extra, ...entry, ...(role ? [`--role=${role}`] : [])], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // A worker serves no HTTP: it is up once the first trade comes back (callers warm up first).
  if (role === 'worker') return child;
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/public-config`);
      if (r.ok) return child;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('server did not start');
}

/** Delete every Redis key a benchmark's queue prefix left behind (jobs, events, locks). */
export async function dropQueuePrefix(prefix: string, redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<number> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(parseRedisUrl(redisUrl)); // as the service reads REDIS_URL: unix:// too
  let dropped = 0;
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length) dropped += await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
  return dropped;
}

/** Stop a child process (a server, a private Redis) and wait until it has exited, so its port is free for the next run. */
export function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    child.once('exit', () => res());
    child.kill('SIGTERM');
  });
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface LoadResult {
  tps: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
}

/** Closed loop: `concurrency` workers each send the next request as soon as the last answered. */
export async function closedLoop(concurrency: number, seconds: number, send: (i: number) => Promise<boolean>): Promise<LoadResult> {
  const lat: number[] = [];
  let ok = 0;
  let failed = 0;
  let seq = 0;
  const until = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const good = await send(seq++);
        lat.push(performance.now() - t0);
        if (good) ok++;
        else failed++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { tps: ok / elapsed, p50: percentile(lat, 50), p99: percentile(lat, 99), ok, failed };
}

/**
 * Open loop at a fixed rate: latency as a user sees it when the service is not saturated. `each`,
 * if given, hears every request's wall-clock start (ms since the epoch) and latency as it ends.
 */
export async function openLoop(rate: number, seconds: number, send: (i: number) => Promise<boolean>, each?: (at: number, ms: number) => void): Promise<LoadResult> {
  const lat: number[] = [];
  let ok = 0;
  let failed = 0;
  const total = Math.max(1, Math.floor(rate * seconds));
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      (async () => {
        const t0 = performance.now();
        const good = await send(i);
        const ms = performance.now() - t0;
        lat.push(ms);
        each?.(performance.timeOrigin + t0, ms);
        if (good) ok++;
        else failed++;
      })(),
    );
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { tps: ok / elapsed, p50: percentile(lat, 50), p99: percentile(lat, 99), ok, failed };
}

/** pgbench against the Postgres the bench uses (BENCH_PG_BASE's host and port; its socket under BENCH_SOCKETS, as the servers). */
const pgbenchConn = () => {
  const u = new URL(PG_BASE);
  return ['-h', BENCH_SOCKETS ? PG_SOCKET_DIR : u.hostname, '-p', u.port || '5432', '-U', u.username || 'postgres'];
};

export function pgbenchInit(scale: number, db: string): void {
  const r = spawnSync('pgbench', [...pgbenchConn(), '-i', '-q', '-s', String(scale), db], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pgbench -i failed: ${r.stderr}`);
}

export function pgbench(args: string[], db: string): number {
  const r = spawnSync('pgbench', [...pgbenchConn(), ...args, db], { encoding: 'utf8' });
  const m = /tps = ([\d.]+)/.exec(r.stdout);
  if (!m) throw new Error(`pgbench failed: ${r.stderr || r.stdout}`);
  return Number(m[1]);
}

/** A command-line option's value (`--name value`), or undefined when it is absent. */
export const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);

export const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * The load client's trade: one POST /predictions/trade, true when it applied (200). The request is
 * written as bytes on a kept-alive socket and the answer read as far as its status and length: a
 * load client's own CPU is CPU the service under test does not get on this 2-core machine, and its
 * turn after each answer is part of every closed-loop cycle (pgbench's client costs a few
 * microseconds). `fetch` spent about 1.4 CPU-ms a request, `http.request` 0.11-0.17, this
 * 0.04-0.07 (issue 29 steps 9 and 16); the server sees the same requests either way.
 */
export function tradeSender(base: string, traders: ReadonlyArray<Record<string, string>>, marketOf: (i: number) => string): (i: number) => Promise<boolean> {
  const url = new URL(`${base}/predictions/trade`);
  const heads = traders.map(
    (t) => `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\n${Object.entries(t).map(([k, v]) => `${k}: ${v}\r\n`).join('')}content-type: application/json\r\n`,
  );
  const request = (i: number) => {
    const body = JSON.stringify({ marketId: marketOf(i), direction: i % 2 ? 'higher' : 'lower', amount: 1 });
    return `${heads[i % heads.length]}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  return rawSender(base, request, (status) => status === 200);
}

/**
 * The same lean client for any request: `request(i)` is the whole HTTP/1.1 request (head and body);
 * it counts as done when `ok(status)`.
 */
export function rawSender(base: string, request: (i: number) => string, ok: (status: number) => boolean): (i: number) => Promise<boolean> {
  const pool = new SocketPool(new URL(base));
  return (i) => pool.send(request(i)).then(ok);
}

/** An idle socket is not used again after this long: the server's keep-alive timeout (5 s) could close it under a request. */
const IDLE_MS = 4000;

/** Kept-alive sockets to one server, one request at a time each: a request takes an idle one or opens one. */
class SocketPool {
  private readonly idle: Array<{ conn: RawConn; since: number }> = [];
  constructor(private readonly url: URL) {}

  async send(request: string): Promise<number> {
    let conn: RawConn | undefined;
    while (!conn && this.idle.length) {
      const e = this.idle.pop()!;
      if (e.conn.open && performance.now() - e.since < IDLE_MS) conn = e.conn;
      else e.conn.close();
    }
    conn ??= await RawConn.open(this.url);
    const { status, keepAlive } = await conn.exchange(request);
    if (keepAlive) this.idle.push({ conn, since: performance.now() });
    else conn.close();
    return status;
  }
}

/**
 * One HTTP/1.1 connection: writes a request, reads one answer (its headers, then content-length
 * bytes). An answer without a content-length (chunked) fails loudly rather than being misread.
 */
class RawConn {
  open = true;
  private buf: Buffer = Buffer.alloc(0);
  private pending?: { resolve(r: { status: number; keepAlive: boolean }): void; reject(e: Error): void };
  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.read(d));
    const fail = (e: Error) => {
      this.open = false;
      this.pending?.reject(e);
      this.pending = undefined;
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the server closed the connection under a request')));
  }

  static open(url: URL): Promise<RawConn> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port) || 80, url.hostname, () => {
        socket.off('error', reject);
        resolve(new RawConn(socket));
      });
      socket.once('error', reject);
    });
  }

  exchange(request: string): Promise<{ status: number; keepAlive: boolean }> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.open = false;
    this.socket.destroy();
  }

  private read(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0 || !this.pending) return;
    const head = this.buf.toString('latin1', 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) {
      const p = this.pending;
      this.pending = undefined;
      this.close();
      p.reject(new Error(`an answer without content-length: ${head.slice(0, 200)}`));
      return;
    }
    const total = end + 4 + Number(length[1]);
    if (this.buf.length < total) return;
    this.buf = this.buf.subarray(total);
    const p = this.pending;
    this.pending = undefined;
    p.resolve({ status: Number(head.slice(9, 12)), keepAlive: !/\r\nconnection: *close/i.test(head) });
  }
}

/**
 * What the trade benches trade in: an owner with a public workspace of 20 metrics (their markets,
 * up to 200, listed), and `traders` agents credited and joined, each as the headers of its requests.
 */
export async function seedTradingWorkspace(base: string, master: string, traders: number, name = 'bench') {
  const call = apiCaller(base);
  const owner = await call('POST', '/agents/register', { name: `owner${Date.now() % 1e6}` }, {});
  await call('POST', `/agents/${owner.agentId}/credit`, { amount: 1e9 }, { 'x-api-key': master });
  const ws = await call('POST', '/workspaces', { name, public: true, defaultLiquidityCredits: 10000 }, { 'x-agent-key': owner.apiKey });
  const ownerHeaders = { 'x-agent-key': owner.apiKey, 'x-workspace-id': ws.id };
  for (let i = 0; i < 20; i++) await call('POST', '/metrics', { name: `m${i}`, value: 500 }, ownerHeaders);
  const markets = ((await call('GET', '/predictions/markets?limit=200', undefined, ownerHeaders)) as Array<{ id: string }>).map((m) => m.id);
  const traderHeaders: Array<Record<string, string>> = [];
  for (let i = 0; i < traders; i++) {
    const t = await call('POST', '/agents/register', { name: `t${i}x${Date.now() % 1e6}` }, {});
    await call('POST', `/agents/${t.agentId}/credit`, { amount: 1e7 }, { 'x-api-key': master });
    await call('POST', `/marketplace/${ws.id}/join`, undefined, { 'x-agent-key': t.apiKey });
    traderHeaders.push({ 'x-agent-key': t.apiKey, 'x-workspace-id': ws.id, 'content-type': 'application/json' });
  }
  return { ownerHeaders, markets, traders: traderHeaders };
}

/** A JSON caller for the service under `base` (…/api): throws with the status and body on a 4xx/5xx. */
export function apiCaller(base: string) {
  return async function call(method: string, path: string, body: unknown, headers: Record<string, string>) {
    const r = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = r.status === 204 ? null : await r.json();
    if (r.status >= 400) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json as any;
  };
}

/** A query session on a bench database, closed after `f`. */
export async function withDb<T>(url: string, f: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

/** The last trade's sequence number: batchSizes counts the trades after it. */
export const lastTradeSeq = (url: string) => withDb(url, async (c) => String((await c.query(`SELECT coalesce(max(seq), 0) AS s FROM trades`)).rows[0].s));

/**
 * How many trades each lane transaction applied in the measured loop: a batch is one transaction,
 * so its trades share their row's xmin. The batch size is what the per-batch costs are divided by.
 */
export function batchSizes(url: string, afterSeq: string): Promise<{ mean: number; sizes: Record<number, number> }> {
  return withDb(url, async (c) => {
    const rows: Array<{ n: number; batches: number }> = (
      await c.query(`SELECT n::int, count(*)::int AS batches FROM (SELECT xmin::text, count(*) AS n FROM trades WHERE seq > $1 GROUP BY 1) x GROUP BY n ORDER BY n`, [afterSeq])
    ).rows;
    const trades = rows.reduce((a, x) => a + x.n * x.batches, 0);
    const count = rows.reduce((a, x) => a + x.batches, 0);
    return { mean: count ? trades / count : NaN, sizes: Object.fromEntries(rows.map((x) => [x.n, x.batches])) };
  });
}
