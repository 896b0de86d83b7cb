import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from '../helpers/services';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

/**
 * A private cluster for the fault harness: its own Redis (no persistence; or a 3-node Redis Cluster),
 * its own database on the shared Postgres, and the service as separate processes (by default one API
 * and two workers), each a process group of its own so a SIGKILL takes the tsx wrapper and the node
 * process under it together.
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
  /** Extra environment for every service process. */
  env?: Record<string, string>;
  label: string;
  /** API processes (default 1: `api`, then `api2`, ...), each on its own port. */
  apis?: number;
  /** Worker processes (default 2: `worker1`, `worker2`, ...). */
  workers?: number;
  /** `cluster`: a Redis Cluster of this many masters (redis-server --cluster-enabled) instead of one Redis. */
  redisClusterNodes?: number;
  /** Replicas per master of the Redis Cluster (default 0): with 1, a master killed fails over to its replica. */
  redisClusterReplicas?: number;
}

const execFileP = promisify(execFile);

export class Cluster {
  readonly dir: string;
  readonly dbName: string;
  readonly databaseUrl: string;
  readonly masterKey = `fault-master-${randomBytes(12).toString('hex')}`;
  readonly queuePrefix = `flt${randomBytes(4).toString('hex')}`;
  /** TRADE_LANES of the services: the harness reports recovery per lane. */
  readonly lanes = 4;
  redisPort = 0;
  /** The Redis Cluster's node ports (empty on a single Redis). */
  readonly clusterPorts: number[] = [];
  private readonly clusterNodes: ChildProcess[] = [];
  readonly apiPorts: number[] = [];
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

  get apiPort(): number {
    return this.apiPorts[0];
  }

  get apiBase(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /** Every API process's base URL. */
  get apiBases(): string[] {
    return this.apiPorts.map((p) => `http://127.0.0.1:${p}`);
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

  /** Ports this cluster has picked: free when picked, bound only later by the process each is for. */
  private readonly picked = new Set<number>();

  /** A free port none of this cluster's processes is to bind yet (freePort alone could hand one out twice). */
  private async pickPort(): Promise<number> {
    for (;;) {
      const port = await freePort();
      if (this.picked.has(port)) continue;
      this.picked.add(port);
      return port;
    }
  }

  /** Redis, a fresh database, then the APIs and workers started at the same time. */
  async start(): Promise<void> {
    process.once('exit', this.exitGuard);
    const apis = this.opts.apis ?? 1;
    for (let i = 0; i < apis; i++) this.apiPorts.push(await this.pickPort());
    let redisEnv: Record<string, string>;
    if (this.opts.redisClusterNodes) {
      await this.startRedisCluster(this.opts.redisClusterNodes, this.opts.redisClusterReplicas ?? 0);
      redisEnv = { REDIS_CLUSTER_NODES: this.clusterPorts.map((p) => `127.0.0.1:${p}`).join(','), QUEUE_BACKEND: 'redis' };
    } else {
      this.redisPort = await this.pickPort();
      await this.startRedis();
      redisEnv = { REDIS_URL: this.redisUrl };
    }
    await this.admin((c) => c.query(`CREATE DATABASE "${this.dbName}"`));
    this.dbCreated = true;
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: this.databaseUrl,
      ...redisEnv,
      MASTER_API_KEY: this.masterKey,
      QUEUE_PREFIX: this.queuePrefix,
      TRADE_LANES: String(this.lanes),
      LOG_LEVEL: 'warn',
      SCHEDULER: 'false',
      RATE_LIMIT_REGISTER_PER_HOUR: '1000000',
      RATE_LIMIT_KEY_PER_MINUTE: '1000000',
      TRADE_WAIT_MS: process.env.FAULT_TRADE_WAIT_MS ?? '3000',
      ...this.opts.env,
    };
    const service = (name: string, role: Role, env: Record<string, string>): ServiceProcess => ({ name, role, env, log: join(this.dir, `${name}.log`), child: null, starts: 0, expectingExit: false });
    this.apiPorts.forEach((port, i) => this.services.push(service(i === 0 ? 'api' : `api${i + 1}`, 'api', { ...base, PORT: String(port) })));
    for (let i = 1; i <= (this.opts.workers ?? 2); i++) this.services.push(service(`worker${i}`, 'worker', { ...base, PORT: String(this.apiPort), ...this.opts.workerEnv }));
    // All at once on the unmigrated database: start-up must be safe in any number.
    for (const s of this.services) this.spawnService(s);
    for (const port of this.apiPorts) await this.waitForApi(90_000, port);
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
    if (s.role === 'api') await this.waitForApi(60_000, Number(s.env.PORT));
  }

  /** Resolves once GET /api gets any HTTP answer; throws if a service exits meanwhile for good. */
  async waitForApi(timeoutMs: number, port = this.apiPort): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (await httpAnswers(port)) return;
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

  /**
   * A Redis Cluster of `n` masters, each with `replicas` replicas: Debian's redis-server in cluster
   * mode, each node with its own directory under this cluster's, the slots assigned by `redis-cli --cluster create`.
   */
  private async startRedisCluster(n: number, replicas: number): Promise<void> {
    for (let i = 0; i < n * (1 + replicas); i++) this.clusterPorts.push(await this.pickPort());
    for (const port of this.clusterPorts) {
      const dir = join(this.dir, `redis-${port}`);
      mkdirSync(dir);
      const fd = openSync(join(this.dir, `redis-${port}.log`), 'a');
      // The cluster bus port is chosen too: by default it is port + 10000, which lands in the
      // ephemeral range, where a client socket's local port once held it (bind: address in use).
      const bus = await this.pickPort();
      const args = ['--port', String(port), '--cluster-port', String(bus), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000'];
      this.clusterNodes.push(spawn('redis-server', args, { detached: true, stdio: ['ignore', fd, fd] }));
      closeSync(fd);
    }
    for (const port of this.clusterPorts) {
      const until = Date.now() + 15_000;
      while (!(await redisPing(port))) {
        if (Date.now() > until) throw new Error(`redis-server (cluster node) did not answer PING on port ${port}\n${tail(join(this.dir, `redis-${port}.log`))}`);
        await sleep(50);
      }
    }
    await execFileP('redis-cli', ['--cluster', 'create', ...this.clusterPorts.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 30_000 });
    // Every node must see every slot assigned before a client's first CLUSTER SLOTS.
    const until = Date.now() + 30_000;
    for (const port of this.clusterPorts) {
      for (;;) {
        const { stdout } = await execFileP('redis-cli', ['-p', String(port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (Date.now() > until) throw new Error(`the Redis Cluster did not reach cluster_state:ok on port ${port}:\n${stdout}`);
        await sleep(100);
      }
    }
  }

  /** The cluster's masters that answer now, by port (CLUSTER NODES as one live node sees it). */
  async clusterMasters(): Promise<number[]> {
    for (const port of this.clusterPorts) {
      if (!(await redisPing(port))) continue;
      const lines = (await this.redisCli(port, 'cluster', 'nodes')).split('\n');
      return lines.filter((l) => / master /.test(` ${l.split(' ')[2]?.replace(/,/g, ' ')} `) && !/fail/.test(l.split(' ')[2] ?? '')).map((l) => Number(/:(\d+)@/.exec(l)?.[1]));
    }
    return [];
  }

  /** SIGKILL one Redis Cluster node (a master: its replica takes over after the node timeout). */
  async killClusterNode(port: number): Promise<void> {
    const i = this.clusterPorts.indexOf(port);
    if (i < 0) throw new Error(`no cluster node on port ${port}`);
    await killGroup(this.clusterNodes[i]);
  }

  /** Run a redis-cli command against one cluster node (or the single Redis); its output trimmed. */
  async redisCli(port: number, ...args: string[]): Promise<string> {
    const { stdout } = await execFileP('redis-cli', ['-p', String(port), ...args], { maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
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
    const redisLogs = this.clusterPorts.length ? this.clusterPorts.map((p) => join(this.dir, `redis-${p}.log`)) : [join(this.dir, 'redis.log')];
    const files: Array<[string, number]> = [...this.services.map((s): [string, number] => [s.log, bytes]), ...redisLogs.map((f): [string, number] => [f, 400])];
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
    await Promise.all(this.clusterNodes.map((n) => killGroup(n)));
    this.clusterNodes.length = 0;
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
    for (const c of [...this.services.map((s) => s.child), this.redis, ...this.clusterNodes]) {
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
