import { Pool } from 'pg';
import type { DataSource, ReplicationMode } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { isConnectionLoss, pgCode } from '../failures';
import { logger } from '../logger';
import { currentReadScope, type ReadScope as Scope } from '../readScope';
import { ListeningClient } from './listeningClient';
import { adoptClient, dropClient, routeQueryRunners, runnerConnecting, setRunnerConnecting } from './typeormInternals';

/**
 * Reads on streaming replicas (issue 60). A read scope (a GET route's handler, a page) sends its
 * single statements to a replica; everything else, and anything in a transaction, goes to the
 * primary. A scope uses a replica only when the replica has replayed past the primary's WAL
 * position read AFTER the scope asked: every commit acknowledged before that (by any process, any
 * pool, so a caller's own last write whichever process served it) is on the replica. One replica
 * per scope, so a request's answers are from one point in time. A replica that fails a read (lost
 * connection, recovery conflict, refused as read-only) is dropped for the scope and the read runs
 * again on the primary: a caller never sees a replica's failure.
 */

export interface ReplicaOptions {
  urls: string[];
  /** A replica further behind than this (or not answering) is left out until it catches up. */
  maxLagMs: number;
  pollMs: number;
  poolMax: number;
}

/**
 * A value read by a query sent after get() was called: callers arriving while one query is in
 * flight share the next one, so under load this is one query per round trip, not one per caller.
 */
class Fresh<T> {
  private running?: Promise<T>;
  private queued?: Promise<T>;
  constructor(private readonly read: () => Promise<T>) {}
  get(): Promise<T> {
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    const after = this.running;
    this.queued = after.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }
  private start(): Promise<T> {
    const p = this.read();
    this.running = p;
    const clear = () => {
      if (this.running === p) this.running = undefined;
    };
    p.then(clear, clear);
    return p;
  }
}

const LSN_SQL = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS lsn";
const REPLAY_SQL = "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::text AS lsn";

function probePool(url: string, timeoutMs: number): Pool {
  const pool = new Pool({ connectionString: url, max: 1, Client: ListeningClient, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, idleTimeoutMillis: 0 });
  pool.on('error', () => undefined); // an idle probe connection that drops is replaced on the next read
  return pool;
}

async function readLsn(pool: Pool, sql: string): Promise<bigint> {
  const { rows } = await pool.query<{ lsn: string | null }>(sql);
  if (rows[0]?.lsn == null) throw new Error('not a streaming replica (no replay position)');
  return BigInt(rows[0].lsn);
}

/** host:port/db of a URL, without its credentials: what the log and the status say. */
export function replicaName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

export class Replica {
  readonly name: string;
  readonly pool: Pool;
  private readonly probe: Pool;
  /** The highest replay position seen: replay only moves forward. */
  replayed = -1n;
  /** When the primary position it has replayed past was read (performance.now()). */
  currentAt = Number.NEGATIVE_INFINITY;
  inUse = false;
  /** Left out (and said so): the next log line about it is when it is in use again. */
  out = false;
  /** Reads it served (connections a read scope took from it), for the status and the tests. */
  served = 0;
  private readonly replay: Fresh<bigint>;

  constructor(
    readonly url: string,
    opts: ReplicaOptions,
  ) {
    this.name = replicaName(url);
    this.pool = new Pool({ connectionString: url, max: opts.poolMax, Client: ListeningClient, connectionTimeoutMillis: Math.max(1000, opts.maxLagMs), options: '-c plan_cache_mode=force_generic_plan' });
    this.pool.on('error', () => undefined);
    this.probe = probePool(url, Math.max(500, opts.maxLagMs));
    this.replay = new Fresh(async () => {
      const lsn = await readLsn(this.probe, REPLAY_SQL);
      if (lsn > this.replayed) this.replayed = lsn;
      return this.replayed;
    });
  }

  replayLsn(): Promise<bigint> {
    return this.replay.get();
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.pool.end(), this.probe.end()]);
  }
}

export class ReadRouter {
  readonly replicas: Replica[];
  /** Reads of a read scope that went to the primary (no replica current enough, or one failed): connections taken. */
  primaryReads = 0;
  private readonly probe: Pool;
  private readonly primaryLsn: Fresh<bigint>;
  private timer?: NodeJS.Timeout;
  private next = 0;
  private polling = false;

  constructor(
    primaryUrl: string,
    readonly opts: ReplicaOptions,
  ) {
    this.replicas = opts.urls.map((u) => new Replica(u, opts));
    this.probe = probePool(primaryUrl, 5000);
    this.primaryLsn = new Fresh(() => readLsn(this.probe, LSN_SQL));
  }

  /** Connections this router opens: each replica's pool and probe, and one probe of the primary. */
  connections(): { replicas: number; primaryProbe: number } {
    return { replicas: this.replicas.length * (this.opts.poolMax + 1), primaryProbe: 1 };
  }

  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.opts.pollMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([this.probe.end(), ...this.replicas.map((r) => r.close())]);
  }

  /** One pass over the replicas: how far behind each is, in or out (one log line each way). */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const asked = performance.now();
      const target = await this.primaryLsn.get().catch(() => undefined);
      await Promise.all(
        this.replicas.map(async (r) => {
          try {
            const replayed = await r.replayLsn();
            if (target !== undefined && replayed >= target) r.currentAt = asked;
            const lagMs = performance.now() - r.currentAt;
            if (lagMs > this.opts.maxLagMs) this.leaveOut(r, `more than ${this.opts.maxLagMs} ms behind the primary`);
            else this.takeIn(r);
          } catch (err) {
            this.leaveOut(r, 'not answering', err);
          }
        }),
      );
    } finally {
      this.polling = false;
    }
  }

  leaveOut(r: Replica, why: string, err?: unknown): void {
    if (r.out) return;
    r.inUse = false;
    r.out = true;
    logger.warn({ replica: r.name, ...(err ? { err } : {}) }, `read replica ${r.name} left out: ${why}; its reads go to the primary until it catches up`);
  }

  private takeIn(r: Replica): void {
    if (r.inUse) return;
    r.inUse = true;
    r.out = false;
    logger.info({ replica: r.name }, `read replica ${r.name} in use`);
  }

  /**
   * The replica a read scope reads from, or null for the primary: one in use that has replayed past
   * the primary's position read now (its last known position first, asked again if that is behind).
   */
  async choose(): Promise<Replica | null> {
    const candidates = this.replicas.filter((r) => r.inUse);
    if (!candidates.length) return null;
    let target: bigint;
    try {
      target = await this.primaryLsn.get();
    } catch {
      return null; // the primary is not answering: the read fails there, as it would without replicas
    }
    const start = this.next++ % candidates.length;
    const order = candidates.map((_, i) => candidates[(start + i) % candidates.length]);
    const known = order.find((r) => r.replayed >= target);
    if (known) return known;
    for (const r of order) {
      try {
        if ((await r.replayLsn()) >= target) return r;
      } catch (err) {
        this.leaveOut(r, 'not answering', err);
      }
    }
    return null;
  }

  /** What a read scope's first statement asks: decided once per scope. */
  forScope(scope: Scope): Promise<Replica | null> {
    scope.choice ??= this.choose().catch(() => null);
    return scope.choice as Promise<Replica | null>;
  }

  status(): { name: string; inUse: boolean; served: number }[] {
    return this.replicas.map((r) => ({ name: r.name, inUse: r.inUse, served: r.served }));
  }
}

/** Errors after which a replica's read runs again on the primary. */
function replicaFailed(err: unknown): 'lost' | 'refused' | null {
  if (isConnectionLoss(err)) return 'lost';
  const code = pgCode(err);
  // read-only (the statement writes), recovery conflict, cancelled by the standby, out of resources
  if (code === '25006' || code === '40001' || code === '57014' || code?.startsWith('53')) return 'refused';
  return null;
}

/**
 * A query runner that, in a read scope and outside a transaction, connects to the scope's replica.
 * A transaction (a save, ds.transaction) starts on the primary, and the scope stays there after.
 */
class RoutedQueryRunner extends PostgresQueryRunner {
  private routed = true;
  private replica?: Replica;

  constructor(
    driver: PostgresDriver,
    mode: ReplicationMode,
    private readonly router: ReadRouter,
    private readonly scope: Scope,
  ) {
    super(driver, mode);
  }

  override connect(): Promise<unknown> {
    if (!this.routed || this.scope.primary || runnerConnecting(this)) return super.connect();
    const connecting = (async () => {
      const replica = this.scope.primary ? null : await this.router.forScope(this.scope);
      if (replica && this.routed && !this.isReleased) {
        try {
          const client = await replica.pool.connect();
          adoptClient(this, client, (err?: unknown) => client.release(err instanceof Error ? err : undefined));
          this.replica = replica;
          replica.served += 1;
          return client;
        } catch (err) {
          this.router.leaveOut(replica, 'not answering', err);
          this.scope.primary = true;
        }
      }
      this.routed = false;
      setRunnerConnecting(this, undefined);
      this.router.primaryReads += 1;
      return super.connect();
    })();
    setRunnerConnecting(this, connecting);
    return connecting;
  }

  /** Let go of the replica's connection: this runner's next statement connects to the primary. */
  private leaveReplica(err?: unknown): void {
    dropClient(this, err);
    this.replica = undefined;
    this.routed = false;
  }

  override async startTransaction(isolationLevel?: Parameters<PostgresQueryRunner['startTransaction']>[0]): Promise<void> {
    if (this.replica) this.leaveReplica();
    this.routed = false;
    this.scope.primary = true;
    return super.startTransaction(isolationLevel);
  }

  override async query(...args: Parameters<PostgresQueryRunner['query']>): ReturnType<PostgresQueryRunner['query']> {
    try {
      return await super.query(...args);
    } catch (err) {
      const replica = this.replica;
      const failed = replica && !this.isTransactionActive ? replicaFailed(err) : null;
      if (!failed || !replica) throw err;
      if (failed === 'lost') this.router.leaveOut(replica, 'lost its connection', err);
      this.leaveReplica(failed === 'lost' ? err : undefined);
      this.scope.primary = true;
      return super.query(...args);
    }
  }
}

const routers = new WeakMap<DataSource, ReadRouter>();

/** Route ds's read scopes over these replicas; started (first poll done) before it returns. */
export async function attachReplicas(ds: DataSource, primaryUrl: string, opts: ReplicaOptions): Promise<ReadRouter> {
  const router = new ReadRouter(primaryUrl, opts);
  await router.start();
  routeQueryRunners(ds, (plain, mode, driver) => {
    const scope = currentReadScope();
    if (!scope) return plain(mode);
    if (scope.primary) {
      router.primaryReads += 1;
      return plain(mode);
    }
    return new RoutedQueryRunner(driver, mode, router, scope);
  });
  routers.set(ds, router);
  return router;
}

export function readRouter(ds: DataSource): ReadRouter | undefined {
  return routers.get(ds);
}

export async function detachReplicas(ds: DataSource): Promise<void> {
  const router = routers.get(ds);
  routers.delete(ds);
  await router?.close();
}
