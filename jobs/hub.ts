import { PostgresConnection, PostgresQueueBackend, Queue, QueueEvents, Worker, type BackendFactory, type JobsOptions, type Processor, type WorkerOptions } from 'bullmq';
import type { ZodType } from 'zod';
import { logger } from '../src/logger';
import { queueFamilies, type JobName, type JobPayload, type QueueFamilyName } from './definitions';

/** Where the queues live: Redis (production, scale-out) or BullMQ's Postgres backend (zero setup). */
export type QueueBackend = { kind: 'redis'; url: string } | { kind: 'postgres'; url: string };

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

/** On Postgres a schema is BullMQ's namespace (its prefix is a Redis key concern): one per QUEUE_PREFIX. */
export function queueSchema(prefix: string): string {
  return `bullmq_${prefix.toLowerCase().replace(/-/g, '_')}`;
}

export function redisConnection(url: string) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    maxRetriesPerRequest: null,
  };
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

/**
 * One Postgres connection (a small pool and one LISTEN client) for every queue, worker and event
 * reader of the process: BullMQ's own factory opens a pool and a LISTEN connection per instance,
 * which for 16 lanes x (queue, worker, events) would exhaust max_connections.
 */
function sharedPostgresFactory(url: string, schema: string): { factory: BackendFactory<PostgresQueueBackend, unknown>; close(): Promise<void> } {
  let conn: PostgresConnection | undefined;
  const connection = () => {
    if (!conn) {
      conn = new PostgresConnection({ connectionString: url, schema, migrate: true, max: 12 });
      conn.on('error', (err) => logger.warn({ err }, 'queue database connection error'));
      // Every queue, worker and event reader listens on this one connection and its LISTEN client.
      conn.setMaxListeners(0);
      const listenClient = conn.getListenClient.bind(conn);
      conn.getListenClient = async () => {
        const client = await listenClient();
        (client as unknown as { setMaxListeners(n: number): void }).setMaxListeners(0);
        return client;
      };
    }
    return conn;
  };
  const factory: BackendFactory<PostgresQueueBackend, unknown> = (name, opts) => {
    const c = connection();
    // Not owning the connection, a backend does not re-LISTEN after the LISTEN client is rebuilt
    // (BullMQ wires that only for owners): do it here, as its owner would.
    const b = new PostgresQueueBackend(c, name, opts as never, false);
    const state = b as unknown as { listening: boolean; listeningEvents: boolean; cancelWait?: () => void; cancelEventWait?: () => void };
    const onInvalidated = () => {
      state.listening = false;
      state.listeningEvents = false;
      state.cancelWait?.();
      state.cancelEventWait?.();
    };
    c.on('listenerinvalidated', onInvalidated);
    return b;
  };
  return {
    factory,
    close: async () => {
      const c = conn;
      conn = undefined;
      await c?.close();
    },
  };
}

/** Producers' side of the queues: names, payload validation, lanes. */
export class JobHub {
  private readonly queues = new Map<string, HubQueue>();
  private readonly events = new Map<string, HubQueueEvents>();
  private readonly pg?: ReturnType<typeof sharedPostgresFactory>;
  constructor(readonly opts: HubOptions) {
    if (opts.backend.kind === 'postgres') this.pg = sharedPostgresFactory(opts.backend.url, queueSchema(opts.prefix));
  }

  get backendKind(): QueueBackend['kind'] {
    return this.opts.backend.kind;
  }

  /** The connection options every Queue, Worker and QueueEvents of this hub shares. */
  private base(): { connection: never; prefix: string } {
    const b = this.opts.backend;
    return { connection: (b.kind === 'redis' ? redisConnection(b.url) : b.url) as never, prefix: this.opts.prefix };
  }

  /** A worker on this hub's backend (workers/index.ts owns which queues get one). */
  worker(name: string, processor: Processor, opts: Omit<WorkerOptions, 'connection'>): HubWorker {
    return this.pg ? new Worker(name, processor, { ...opts, ...this.base() }, this.pg.factory) : new Worker(name, processor, { ...opts, ...this.base() });
  }

  queueNames(family: QueueFamilyName): string[] {
    const f = queueFamilies[family];
    return f.laned ? Array.from({ length: this.opts.lanes }, (_, k) => `${family}-${k}`) : [family];
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
      this.events.set(name, e);
    }
    return e;
  }

  queueFor(family: QueueFamilyName, laneKey?: string): string {
    if (!queueFamilies[family].laned) return family;
    if (!laneKey) throw new Error(`queue family ${family} needs a lane key`);
    return `${family}-${laneOf(laneKey, this.opts.lanes)}`;
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
   * The one enqueue-and-wait: add a job, then wait up to `waitMs` for its result. `finished: false`
   * when Redis did not take the job in time, the job failed, or it did not finish in time (it may
   * still run: callers whose work is journalled read the outcome from Postgres).
   */
  async enqueueAndWait<F extends QueueFamilyName, J extends JobName<F>>(
    family: F,
    job: J,
    payload: JobPayload<F, J>,
    opts: JobsOptions & { laneKey?: string; waitMs: number },
  ): Promise<{ finished: true; result: unknown } | { finished: false }> {
    const { waitMs, ...jobOpts } = opts;
    const events = this.queueEvents(this.queueFor(family, jobOpts.laneKey));
    try {
      // While Redis is away an enqueue waits for it: bounded like the wait for the result.
      const added = await withTimeout(
        events.waitUntilReady().then(() => this.enqueue(family, job, payload, jobOpts)),
        waitMs,
      );
      return { finished: true, result: await added.waitUntilFinished(events, waitMs) };
    } catch {
      return { finished: false };
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.events.values()].map((e) => e.close()));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.events.clear();
    this.queues.clear();
    await this.pg?.close();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  p.catch(() => undefined); // a late failure after the timeout is nobody's to handle
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
