import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from '../helpers/services';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';

/**
 * A private cluster for the fault harness: its own Redis (no persistence), its own database on the
 * shared Postgres, and the service as separate processes (one API, two workers), each a process
 * group of its own so a SIGKILL takes the tsx wrapper and the node process under it together.
 */

export const REPO_ROOT = resolve(__dirname, '..', '..');
const TSX = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const PG_BASE = process.env.TEST_DATABASE_BASE ?? 'postgres://postgres@127.0.0.1:5432';

export type Role = 'api' | 'worker';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL a whole process group we started and wait until nothing of it is left. */
async function killGroup(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const pid = child.pid;
  if (!pid) return;
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r()));
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer);
  const until = Date.now() + timeoutMs;
  while (groupAlive(pid) && Date.now() < until) await sleep(20);
}

/** The last `bytes` of a log file, for failure reports. */
export function tail(path: string, bytes = 4000): string {
  if (!existsSync(path)) return '(no log)';
  const text = readFileSync(path, 'utf8');
  return text.length > bytes ? `…${text.slice(-bytes)}` : text;
}

/** What a crashed incarnation printed besides its JSON log lines (Node's report of the fatal error), last 60 lines. */
function crashText(path: string): string {
  if (!existsSync(path)) return '(no log)';
  const text = readFileSync(path, 'utf8');
  const incarnation = text.slice(text.lastIndexOf('\n===== '));
  const plain = incarnation.split('\n').filter((l) => l.trim() && !l.startsWith('{') && !l.startsWith('====='));
  return (plain.length ? plain : incarnation.split('\n')).slice(-60).join('\n');
}

export interface ServiceProcess {
  name: string;
  role: Role;
  env: Record<string, string>;
  log: string;
  child: ChildProcess | null;
  /** Incarnations started (1 = the first start). */
  starts: number;
  /** Set while the harness itself kills or stops the process, so its exit is not counted as a crash. */
  expectingExit: boolean;
}

export interface Crash {
  name: string;
  at: number;
  code: number | null;
  signal: string | null;
  /** The last lines the process wrote. */
  logTail: string;
}

export interface ClusterOptions {
  /** Extra environment for the worker processes (mode B sets TRADE_LANES_SERIAL=false). */
  workerEnv?: Record<string, string>;
  label: string;
}

export class Cluster {
  readonly dir: string;
  readonly dbName: string;
  readonly databaseUrl: string;
  readonly masterKey = `fault-master-${randomBytes(12).toString('hex')}`;
  readonly queuePrefix = `flt${randomBytes(4).toString('hex')}`;
  /** TRADE_LANES of the services: the harness reports recovery per lane. */
  readonly lanes = 4;
  redisPort = 0;
  apiPort = 0;
  readonly services: ServiceProcess[] = [];
  readonly crashes: Crash[] = [];
  private redis: ChildProcess | null = null;
  private redisStarts = 0;
  private dbCreated = false;
  private closed = false;
  private readonly exitGuard = () => this.killAllSync();

  constructor(readonly opts: ClusterOptions) {
    this.dir = mkdtempSync(join(tmpdir(), `mpps-faults-${opts.label}-`));
    this.dbName = `mpps_faults_${Date.now()}_${randomBytes(3).toString('hex')}`;
    this.databaseUrl = `${PG_BASE}/${this.dbName}`;
  }

  get redisUrl(): string {
    return `redis://127.0.0.1:${this.redisPort}`;
  }

  get apiBase(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /** An admin connection to the `postgres` database (creating, dropping, terminating). */
  async admin<T>(f: (c: Client) => Promise<T>): Promise<T> {
    const u = new URL(PG_BASE);
    u.pathname = '/postgres';
    const c = new Client({ connectionString: u.toString() });
    await c.connect();
    try {
      return await f(c);
    } finally {
      await c.end();
    }
  }

  /** A connection to the test database, for the checks at the end. */
  async db(): Promise<Client> {
    const c = new Client({ connectionString: this.databaseUrl });
    await c.connect();
    return c;
  }

  /** Redis, a fresh database, then the API and both workers started at the same time. */
  async start(): Promise<void> {
    process.once('exit', this.exitGuard);
    this.redisPort = await freePort();
    this.apiPort = await freePort();
    await this.startRedis();
    await this.admin((c) => c.query(`CREATE DATABASE "${this.dbName}"`));
    this.dbCreated = true;
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.redisUrl,
      PORT: String(this.apiPort),
      MASTER_API_KEY: this.masterKey,
      QUEUE_PREFIX: this.queuePrefix,
      TRADE_LANES: String(this.lanes),
      LOG_LEVEL: 'warn',
      SCHEDULER: 'false',
      RATE_LIMIT_REGISTER_PER_HOUR: '1000000',
      RATE_LIMIT_KEY_PER_MINUTE: '1000000',
      TRADE_WAIT_MS: process.env.FAULT_TRADE_WAIT_MS ?? '3000',
    };
    this.services.push(
      { name: 'api', role: 'api', env: base, log: join(this.dir, 'api.log'), child: null, starts: 0, expectingExit: false },
      { name: 'worker1', role: 'worker', env: { ...base, ...this.opts.workerEnv }, log: join(this.dir, 'worker1.log'), child: null, starts: 0, expectingExit: false },
      { name: 'worker2', role: 'worker', env: { ...base, ...this.opts.workerEnv }, log: join(this.dir, 'worker2.log'), child: null, starts: 0, expectingExit: false },
    );
    // All three at once on the unmigrated database: start-up must be safe in any number.
    for (const s of this.services) this.spawnService(s);
    await this.waitForApi(90_000);
  }

  service(name: string): ServiceProcess {
    const s = this.services.find((x) => x.name === name);
    if (!s) throw new Error(`no service ${name}`);
    return s;
  }

  private spawnService(s: ServiceProcess): void {
    s.starts += 1;
    const fd = openSync(s.log, 'a');
    writeSync(fd, `\n===== ${s.name} start #${s.starts} at ${new Date().toISOString()} =====\n`);
    const child = spawn(TSX, ['src/main.ts', `--role=${s.role}`], { cwd: REPO_ROOT, env: s.env, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    s.child = child;
    s.expectingExit = false;
    child.once('exit', (code, signal) => {
      if (s.child !== child) return;
      s.child = null;
      if (s.expectingExit || this.closed) return;
      // Nobody asked it to stop: a crash. Record it and restart it, as a supervisor would.
      this.crashes.push({ name: s.name, at: Date.now(), code, signal, logTail: crashText(s.log) });
      setTimeout(() => {
        if (!this.closed && !s.child) this.spawnService(s);
      }, 500);
    });
  }

  /** SIGKILL a service (the whole process group) and start it again at once. */
  async killAndRestart(name: string): Promise<void> {
    const s = this.service(name);
    if (s.child) {
      s.expectingExit = true;
      await killGroup(s.child);
      s.child = null;
    }
    this.spawnService(s);
    if (s.role === 'api') await this.waitForApi(60_000);
  }

  /** Resolves once GET /api gets any HTTP answer; throws if a service exits meanwhile for good. */
  async waitForApi(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (await httpAnswers(this.apiPort)) return;
      await sleep(100);
    }
    throw new Error(`the API did not answer GET /api within ${timeoutMs} ms\n${this.logTails()}`);
  }

  private async startRedis(): Promise<void> {
    this.redisStarts += 1;
    const log = join(this.dir, 'redis.log');
    const fd = openSync(log, 'a');
    writeSync(fd, `\n===== redis start #${this.redisStarts} at ${new Date().toISOString()} =====\n`);
    this.redis = spawn('redis-server', ['--port', String(this.redisPort), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', '--dir', this.dir], {
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      if (await redisPing(this.redisPort)) return;
      await sleep(50);
    }
    throw new Error(`redis-server did not answer PING on port ${this.redisPort}\n${tail(log)}`);
  }

  /** SIGKILL Redis and start an empty one on the same port: every queue, job and lock is gone. */
  async restartRedis(): Promise<void> {
    if (this.redis) await killGroup(this.redis);
    this.redis = null;
    await this.startRedis();
  }

  /** Terminate every connection to the test database; returns how many were terminated. */
  async terminatePg(): Promise<number> {
    return this.admin(async (c) => {
      const r = await c.query(`SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [this.dbName]);
      return r.rows.filter((x: { t: boolean }) => x.t).length;
    });
  }

  logTails(bytes = 3000): string {
    const files: Array<[string, number]> = [...this.services.map((s): [string, number] => [s.log, bytes]), [join(this.dir, 'redis.log'), 400]];
    return files.map(([f, n]) => `----- ${f} -----\n${tail(f, n)}`).join('\n');
  }

  /** Kill every child, stop Redis, drop the database; safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.services) s.expectingExit = true;
    await Promise.all(this.services.map(async (s) => (s.child ? killGroup(s.child) : undefined)));
    if (this.redis) await killGroup(this.redis);
    this.redis = null;
    if (this.dbCreated && process.env.KEEP_FAULT_DB) {
      console.log(`KEEP_FAULT_DB: kept database ${this.dbName}`);
    } else if (this.dbCreated) {
      await this.admin((c) => c.query(`DROP DATABASE IF EXISTS "${this.dbName}" WITH (FORCE)`));
      this.dbCreated = false;
    }
    process.removeListener('exit', this.exitGuard);
    if (!process.env.KEEP_FAULT_LOGS) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Last resort when the test process exits without afterAll: no stray processes. */
  private killAllSync(): void {
    for (const c of [...this.services.map((s) => s.child), this.redis]) {
      if (c?.pid) {
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }
}

/** Send `request` to a local port; true once the answer matches `answered` within `ms`. */
function probe(port: number, request: string, answered: RegExp, ms: number): Promise<boolean> {
  return new Promise((res) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(ms, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => sock.write(request));
    sock.on('data', (d) => {
      buf += d.toString();
      if (answered.test(buf)) done(true);
    });
    sock.once('end', () => done(answered.test(buf)));
  });
}

const httpAnswers = (port: number) => probe(port, `GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, /^HTTP\/1\.\d \d{3}/, 2000);
const redisPing = (port: number) => probe(port, 'PING\r\n', /\+PONG/, 1000);
