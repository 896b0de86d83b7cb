import { PostgresConnection, PostgresQueueBackend, Queue, QueueEvents, Worker, type BackendFactory, type JobsOptions, type Processor, type WorkerOptions } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import type { ZodType } from 'zod';
import { closeAll } from '../src/closeAll';
import { QUEUE_POOL_MAX } from '../src/db/connections';
import { ListeningClient } from '../src/db/listeningClient';
import { logger } from '../src/logger';
import { parseRedisUrl } from '../src/redisUrl';
import { signalWithin } from '../src/signals';
import { listenClientOf, prepareListenClients, relistenWhenInvalidated, type ListenClient } from './bullmqInternals';
import { queueFamilies, queueSchema, resultSchema, type JobName, type JobPayload, type JobResult, type QueueFamilyName } from './definitions';

/**
 * Where the queues live: Redis (production, scale-out), a Redis Cluster (`clusterNodes`, the seed
 * nodes; `url` then only carries the password), or BullMQ's Postgres backend (zero setup).
 */
export type QueueBackend = { kind: 'redis'; url: string; clusterNodes?: string } | { kind: 'postgres'; url: string };

export interface HubOptions {
  backend: QueueBackend;
  prefix: string;
  lanes: number;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- one queue type for both backends */
export type HubQueue = Queue<any, any, string, any, any, string, any, any>;
export type HubQueueEvents = QueueEvents<any, any, any>;
export type HubWorker = Worker<any, any, string, any, any, any>;
/* eslint-enable @typescript-eslint/no-explicit-any */

export function redisConnection(url: string) {
  return {
    ...parseRedisUrl(url),
    maxRetriesPerRequest: null,
    // Reconnect within half a second of Redis answering again (BullMQ's default waits 1 s, then up
    // to 20 s): a refused connect costs nothing, a late one stalls every lane.
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 4), 500),
  };
}

/** `host:port,host:port` (REDIS_CLUSTER_NODES) as ioredis Cluster seed nodes. */
export function clusterSeeds(nodes: string): Array<{ host: string; port: number }> {
  return nodes.split(',').map((n) => {
    const i = n.lastIndexOf(':');
    return { host: n.slice(0, i).trim(), port: Number(n.slice(i + 1)) };
  });
}

/**
 * A Redis client for the queue backend: a plain connection, or an ioredis Cluster over the seed
 * nodes when the backend names them (BullMQ, the rate limits and the key-use debounce all accept one).
 */
export function connectRedis(backend: { url: string; clusterNodes?: string }): Redis | Cluster {
  const plain = redisConnection(backend.url);
  if (!backend.clusterNodes) return new Redis({ ...plain, lazyConnect: false });
  // maxRetriesPerRequest null: BullMQ requires it of a connection its workers duplicate for blocking reads.
  return new Cluster(clusterSeeds(backend.clusterNodes), { redisOptions: { password: plain.password, maxRetriesPerRequest: null } });
}

/**
 * A Redis Cluster hash tag: every key of one queue (`<prefix>:<name>:...`) hashes on the braced part
 * alone, so each queue's keys (and BullMQ's multi-key scripts over them) sit in one slot, and the
 * lanes, each tagged with its own number, spread over the shards. The prefix must hold no braces
 * (QUEUE_PREFIX allows none). Same names on a single Redis, so its keys can move to a cluster as they are.
 */
export function taggedQueueName(family: string, lane?: number): string {
  return lane === undefined ? `{${family}}` : `${family}-{${lane}}`;
}

type ConnectionEvents = { on(event: string, f: () => void): unknown };

/** Per queue: whether its Redis connection is up, the waits to give up on a change, who waits for its return. */
interface QueueLink {
  up: boolean;
  giveUp: Set<() => void>;
  back: Set<() => void>;
}

/** FNV-1a: a stable lane for a market id across processes. */
export function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % lanes;
}

/** The queues' Postgres connection (a pool of 12 and a LISTEN client) on `schema`, as the hub opens it. */
export function queueConnection(url: string, schema: string): PostgresConnection {
  // synchronous_commit off for queue state only (never the ledger's connections): a crash may
  // lose the last jobs' moves as an unpersisted Redis would, and the watchdog already re-enqueues
  // every journalled request without a live job; it saves a WAL flush per job move. Its pool's
  // clients keep an error listener while checked out (ListeningClient): a backend terminated
  // between two of BullMQ's statements must fail them, not end the process.
  const options = { connectionString: url, schema, migrate: true, max: QUEUE_POOL_MAX, options: '-c synchronous_commit=off', Client: ListeningClient };
  const conn = new PostgresConnection(options);
  conn.on('error', (err) => logger.warn({ err }, 'queue database connection error'));
  // Every queue, worker and event reader listens on this one connection and its LISTEN client.
  conn.setMaxListeners(0);
  prepareListenClients(conn, (client) => {
    client.setMaxListeners(0);
    oneQueryAtATime(client);
  });
  return conn;
}

/**
 * Every queue's backend LISTENs on the one shared client at once; pg queues a query sent while
 * another runs, and warns (DeprecationWarning, at every start) that pg 9 will refuse it. So the
 * client's queries run one after the other here.
 */
function oneQueryAtATime(client: { query: (sql: string) => Promise<unknown> }): void {
  const query = client.query.bind(client);
  let tail: Promise<unknown> = Promise.resolve();
  client.query = (sql: string) => {
    const run = tail.then(() => query(sql));
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * One Postgres connection (a small pool and one LISTEN client) for every queue, worker and event
 * reader of the process: BullMQ's own factory opens a pool and a LISTEN connection per instance,
 * which for 16 lanes x (queue, worker, events) would exhaust max_connections.
 */
function sharedPostgresFactory(url: string, schema: string): {
  factory: BackendFactory<PostgresQueueBackend, unknown>;
  completions: PgCompletions;
  close(): Promise<void>;
} {
  let conn: PostgresConnection | undefined;
  const connection = () => (conn ??= queueConnection(url, schema));
  const factory: BackendFactory<PostgresQueueBackend, unknown> = (name, opts) => {
    const c = connection();
    // Not owning the connection, a backend does not re-LISTEN after the LISTEN client is rebuilt
    // (BullMQ wires that only for owners): do it here, as its owner would.
    const b = new PostgresQueueBackend(c, name, opts as never, false);
    relistenWhenInvalidated(c, b);
    return b;
  };
  const completions = new PgCompletions(connection, `mpps_done_${schema}`);
  return {
    factory,
    completions,
    close: async () => {
      completions.close();
      const c = conn;
      conn = undefined;
      await c?.close();
    },
  };
}

type Notification = { channel: string; payload?: string };

/**
 * The completion wait on Postgres. BullMQ's Postgres event reader (QueueEvents) can miss an event:
 * one published between its read and its LISTEN waits for the next poll, and one committed out of id
 * order behind its cursor is never read. So a worker NOTIFYs `<channel>` when a job of this schema
 * completes or fails, and a waiter re-reads the job's state on each notice (and every 2 s anyway):
 * registered before it reads, it cannot miss the change.
 */
class PgCompletions {
  private readonly wakers = new Map<string, Set<() => void>>();
  private listening?: Promise<ListenClient>;
  private readonly onNotice = (m: Notification) => {
    if (m.channel !== this.channel || !m.payload) return;
    for (const wake of this.wakers.get(m.payload) ?? []) wake();
  };
  constructor(
    private readonly conn: () => PostgresConnection,
    private readonly channel: string,
  ) {}

  private listen(): Promise<ListenClient> {
    if (!this.listening) {
      const c = this.conn();
      const p = (async () => {
        const client = await listenClientOf(c);
        await client.query(`LISTEN "${this.channel}"`);
        client.on('notification', this.onNotice);
        return client;
      })();
      p.catch(() => (this.listening = undefined));
      this.listening = p;
      // A rebuilt LISTEN client has none of our LISTENs: listen again and let every waiter re-read.
      c.once('listenerinvalidated', () => {
        this.listening = undefined;
        for (const set of this.wakers.values()) for (const wake of set) wake();
      });
    }
    return this.listening;
  }

  /** Called by the worker side once a job's completion or failure is committed. */
  async notify(queue: string, id: string): Promise<void> {
    await this.conn().pool.query('SELECT pg_notify($1, $2)', [this.channel, JSON.stringify([queue, id])]);
  }

  async wait(queue: HubQueue, id: string, ms: number): Promise<unknown> {
    await this.listen();
    const key = JSON.stringify([queue.name, id]);
    const until = Date.now() + ms;
    let set = this.wakers.get(key);
    if (!set) this.wakers.set(key, (set = new Set()));
    try {
      while (Date.now() < until) {
        let wake!: () => void;
        const woken = new Promise<void>((r) => (wake = r));
        const timer = setTimeout(wake, Math.min(2000, Math.max(0, until - Date.now())));
        set.add(wake);
        try {
          // State first, then the row: a row read first could predate the result stored with the state.
          const state = await queue.getJobState(id);
          if (state === 'completed') return (await queue.getJob(id))?.returnvalue;
          if (state === 'failed') throw new Error((await queue.getJob(id))?.failedReason ?? 'job failed');
          await woken;
        } finally {
          clearTimeout(timer);
          set.delete(wake);
        }
      }
      throw new Error(`not finished within ${ms} ms`);
    } finally {
      if (set.size === 0) this.wakers.delete(key);
    }
  }

  close(): void {
    for (const set of this.wakers.values()) for (const wake of set) wake();
  }
}

/** Producers' side of the queues: names, payload validation, lanes. */
export class JobHub {
  private readonly queues = new Map<string, HubQueue>();
  private readonly events = new Map<string, HubQueueEvents>();
  private readonly pg?: ReturnType<typeof sharedPostgresFactory>;
  /** On a Redis Cluster: one Cluster client the queues share (workers and event readers duplicate it for their blocking reads). */
  private cluster?: Cluster;
  private readonly links = new Map<string, QueueLink>();
  constructor(readonly opts: HubOptions) {
    if (opts.backend.kind === 'postgres') this.pg = sharedPostgresFactory(opts.backend.url, queueSchema(opts.prefix));
  }

  get backendKind(): QueueBackend['kind'] {
    return this.opts.backend.kind;
  }

  /** The connection options every Queue, Worker and QueueEvents of this hub shares. */
  private base(): { connection: never; prefix: string } {
    const b = this.opts.backend;
    if (b.kind === 'redis' && b.clusterNodes) {
      if (!this.cluster) {
        this.cluster = connectRedis(b) as Cluster;
        this.cluster.on('error', (err) => logger.warn({ err }, 'redis cluster connection error'));
      }
      return { connection: this.cluster as never, prefix: this.opts.prefix };
    }
    return { connection: (b.kind === 'redis' ? redisConnection(b.url) : b.url) as never, prefix: this.opts.prefix };
  }

  /** A worker on this hub's backend (workers/index.ts owns which queues get one). */
  worker(name: string, processor: Processor, opts: Omit<WorkerOptions, 'connection'>): HubWorker {
    const pg = this.pg;
    if (!pg) return new Worker(name, processor, { ...opts, ...this.base() });
    const w = new Worker(name, processor, { ...opts, ...this.base() }, pg.factory);
    const notify = (job?: { queueName: string; id?: string }) => {
      if (job?.id) pg.completions.notify(job.queueName, job.id).catch((err: unknown) => logger.warn({ err, queue: name }, 'completion notice failed'));
    };
    w.on('completed', notify);
    w.on('failed', notify);
    return w;
  }

  /** A queue's name: hash-tagged on Redis (see taggedQueueName); as before on Postgres, whose queued jobs so keep their names. */
  private nameOf(family: QueueFamilyName, lane?: number): string {
    if (this.opts.backend.kind === 'redis') return taggedQueueName(family, lane);
    return lane === undefined ? family : `${family}-${lane}`;
  }

  queueNames(family: QueueFamilyName): string[] {
    const f = queueFamilies[family];
    return f.laned ? Array.from({ length: this.opts.lanes }, (_, k) => this.nameOf(family, k)) : [this.nameOf(family)];
  }

  allQueueNames(): string[] {
    return (Object.keys(queueFamilies) as QueueFamilyName[]).flatMap((f) => this.queueNames(f));
  }

  queue(name: string): HubQueue {
    let q = this.queues.get(name);
    if (!q) {
      q = this.pg ? new Queue(name, this.base(), this.pg.factory) : new Queue(name, this.base());
      q.setMaxListeners(0); // every waiting caller listens for 'closing'
      q.on('error', (err) => logger.warn({ queue: name, err }, 'queue connection error'));
      if (!this.pg) this.follow(name, [q.getBackend().client], true);
      this.queues.set(name, q);
    }
    return q;
  }

  queueEvents(name: string): HubQueueEvents {
    let e = this.events.get(name);
    if (!e) {
      e = this.pg ? new QueueEvents(name, this.base(), this.pg.factory) : new QueueEvents(name, this.base());
      e.setMaxListeners(0); // one completion listener per waiting request
      e.on('error', (err) => logger.warn({ queue: name, err }, 'queue events connection error'));
      if (!this.pg) this.follow(name, [e.getBackend().client, e.getBackend().blockingClient], false);
      this.events.set(name, e);
    }
    return e;
  }

  /** Whether this process reads a queue's event stream (tests: trades are answered without it). */
  readsEventsOf(name: string): boolean {
    return this.events.has(name);
  }

  private link(name: string): QueueLink {
    let l = this.links.get(name);
    if (!l) this.links.set(name, (l = { up: true, giveUp: new Set(), back: new Set() }));
    return l;
  }

  /**
   * Follows the Redis connections of a queue (its producer's, or its events reader's): when one
   * drops or comes back, a job being waited for may have been erased with Redis, or its end
   * missed, so every wait on the queue gives up at once ('unknown': the journal has the truth)
   * instead of waiting out its time. `owner`: the producer's, whose return is the queue's.
   */
  private follow(name: string, clients: Array<Promise<unknown> | undefined>, owner: boolean): void {
    for (const client of clients) {
      client?.then(
        (c) => {
          let up = true;
          const change = (nowUp: boolean) => {
            if (up === nowUp) return;
            up = nowUp;
            const l = this.link(name);
            for (const f of [...l.giveUp]) f();
            if (!owner) return;
            l.up = nowUp;
            if (nowUp) for (const f of [...l.back]) f();
          };
          for (const ev of ['close', 'end', 'reconnecting']) (c as ConnectionEvents).on(ev, () => change(false));
          (c as ConnectionEvents).on('ready', () => change(true));
          // A Redis Cluster stays up as a whole when one of its nodes goes (a master killed, failing
          // over to its replica): that node's jobs and events may be gone with it, so the waits give
          // up as on a dropped connection (issue 66), and the cluster is at once usable for the rest.
          if ((c as { isCluster?: boolean }).isCluster)
            (c as ConnectionEvents).on('-node', () => {
              change(false);
              change(true);
            });
        },
        () => undefined,
      );
    }
  }

  /** Resolves when the connection of a queue changes (see follow); `dispose` stops listening. */
  private connectionChange(name: string): { changed: Promise<'interrupted'>; dispose(): void } {
    const l = this.link(name);
    let f!: () => void;
    const changed = new Promise<'interrupted'>((res) => (f = () => res('interrupted')));
    l.giveUp.add(f);
    return { changed, dispose: () => l.giveUp.delete(f) };
  }

  /**
   * True once the queue's producer connection is up (at once if it is), false after `ms` without
   * it. On Postgres always true: nothing there is erased by a reconnection.
   */
  whenConnected(name: string, ms: number): Promise<boolean> {
    const l = this.pg ? undefined : this.links.get(name);
    if (!l || l.up) return Promise.resolve(true);
    return signalWithin(l.back, ms);
  }

  queueFor(family: QueueFamilyName, laneKey?: string): string {
    if (!queueFamilies[family].laned) return this.nameOf(family);
    if (!laneKey) throw new Error(`queue family ${family} needs a lane key`);
    return this.nameOf(family, laneOf(laneKey, this.opts.lanes));
  }

  async enqueue<F extends QueueFamilyName, J extends JobName<F>>(
    family: F,
    job: J,
    payload: JobPayload<F, J>,
    opts: JobsOptions & { laneKey?: string } = {},
  ) {
    const schema = (queueFamilies[family].jobs as Record<string, ZodType>)[job];
    const data = schema.parse(payload);
    const { laneKey, ...jobOpts } = opts;
    const q = this.queue(this.queueFor(family, laneKey));
    return q.add(job, data, { removeOnComplete: { age: 3600, count: 10000 }, removeOnFail: { age: 86400 }, ...jobOpts });
  }

  /**
   * The one enqueue-and-wait: add a job, then wait up to `waitMs` for its result, decoded with the
   * job's result schema (jobs/definitions.ts). `finished: false` when Redis did not take the job in
   * time, the job failed, or it did not finish in time (it may still run: callers whose work is
   * journalled read the outcome from Postgres), or, logged as an error, when its result does not
   * match its schema. `interrupted`: given up because the queue's Redis connection dropped or came
   * back (the job may have been erased with Redis: whenConnected says when to enqueue it again).
   */
  async enqueueAndWait<F extends QueueFamilyName, J extends JobName<F>>(
    family: F,
    job: J,
    payload: JobPayload<F, J>,
    opts: JobsOptions & { laneKey?: string; waitMs: number },
  ): Promise<{ finished: true; result: JobResult<F, J> } | Unfinished> {
    const end = await this.enqueueAndWaitRaw(family, job, payload, opts);
    if (!end.finished) return end;
    const parsed = resultSchema(family, job)!.safeParse(end.result);
    if (parsed.success) return { finished: true, result: parsed.data as JobResult<F, J> };
    logger.error({ family, job, jobId: opts.jobId, issues: parsed.error.issues }, 'job result does not match its schema');
    return { finished: false };
  }

  /**
   * The same wait, but the job's end is what its caller hears (`ended`: a notice its own transaction
   * commits, already decoded) in place of the queue's completion events and the job's result: no
   * event-stream reads. A rejection of `ended` is `finished: false`, as is a drop of the connection.
   */
  async enqueueAndHear<F extends QueueFamilyName, J extends JobName<F>, T>(
    family: F,
    job: J,
    payload: JobPayload<F, J>,
    opts: JobsOptions & { laneKey?: string; waitMs: number; ended: Promise<T> },
  ): Promise<{ finished: true; result: T } | Unfinished> {
    return (await this.enqueueAndWaitRaw(family, job, payload, opts)) as { finished: true; result: T } | Unfinished;
  }

  private async enqueueAndWaitRaw<F extends QueueFamilyName, J extends JobName<F>>(
    family: F,
    job: J,
    payload: JobPayload<F, J>,
    opts: JobsOptions & { laneKey?: string; waitMs: number; ended?: Promise<unknown> },
  ): Promise<{ finished: true; result: unknown } | Unfinished> {
    const { waitMs, ended, ...jobOpts } = opts;
    const queueName = this.queueFor(family, jobOpts.laneKey);
    if (this.pg) {
      const q = this.queue(queueName);
      try {
        const added = await withTimeout(this.enqueue(family, job, payload, jobOpts), waitMs);
        return { finished: true, result: await (ended ? withTimeout(ended, waitMs) : this.pg.completions.wait(q, added.id!, waitMs)) };
      } catch {
        return { finished: false };
      }
    }
    const link = this.connectionChange(queueName);
    try {
      return await this.waitOnRedis(family, job, payload, jobOpts, { queueName, waitMs, ended, changed: link.changed });
    } finally {
      link.dispose();
    }
  }

  private async waitOnRedis<F extends QueueFamilyName, J extends JobName<F>>(
    family: F,
    job: J,
    payload: JobPayload<F, J>,
    jobOpts: JobsOptions & { laneKey?: string },
    w: { queueName: string; waitMs: number; ended?: Promise<unknown>; changed: Promise<'interrupted'> },
  ): Promise<{ finished: true; result: unknown } | Unfinished> {
    const { queueName, waitMs, changed } = w;
    const interrupted = { finished: false, interrupted: true } as const;
    // The end comes from the caller's own notice (no event-stream reads), or else from BullMQ's own
    // wait on the queue's events (which asks Redis once whether the job already ended).
    if (w.ended) {
      const heard = withTimeout(w.ended, waitMs).then(
        (result) => ({ finished: true as const, result }),
        () => ({ finished: false as const }),
      );
      try {
        const added = withTimeout(this.enqueue(family, job, payload, jobOpts), waitMs);
        added.catch(() => undefined); // given up on: its late failure is nobody's
        if ((await Promise.race([added, changed])) === 'interrupted') return interrupted;
        const end = await Promise.race([heard, changed]);
        return end === 'interrupted' ? interrupted : end;
      } catch {
        return { finished: false };
      }
    }
    const events = this.queueEvents(queueName);
    try {
      // While Redis is away an enqueue waits for it: bounded like the wait for the result.
      const ended = withTimeout(
        events.waitUntilReady().then(() => this.enqueue(family, job, payload, jobOpts)),
        waitMs,
      ).then(async (added) => ({ finished: true as const, result: await added.waitUntilFinished(events, waitMs) }));
      ended.catch(() => undefined); // given up on: its late failure is nobody's
      return (await Promise.race([ended, changed])) === 'interrupted' ? interrupted : await ended;
    } catch {
      return { finished: false };
    }
  }

  /** Close every reader and queue, then the shared connections, even when one fails; then throw the first failure. */
  async close(): Promise<void> {
    // Each group is listed when its turn comes (a queue opened while the events close is closed too).
    await closeAll([
      () => closeAll([[...this.events.values()].map((e) => () => e.close())]),
      () => closeAll([[...this.queues.values()].map((q) => () => q.close())]),
      () => {
        this.events.clear();
        this.queues.clear();
        return this.pg?.close();
      },
      () => {
        const cluster = this.cluster;
        this.cluster = undefined;
        return cluster?.quit().catch(() => cluster.disconnect());
      },
    ]);
  }
}

/** A wait that ended without the job's result. */
export type Unfinished = { finished: false; interrupted?: true };

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  p.catch(() => undefined); // a late failure after the timeout is nobody's to handle
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
