import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import type { ZodType } from 'zod';
import { logger } from '../src/logger';
import { queueFamilies, type JobName, type JobPayload, type QueueFamilyName } from './definitions';

export interface HubOptions {
  redisUrl: string;
  prefix: string;
  lanes: number;
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

/** Producers' side of the queues: names, payload validation, lanes. */
export class JobHub {
  private readonly queues = new Map<string, Queue>();
  private readonly events = new Map<string, QueueEvents>();
  /** Per queue: callers waiting for a job's end, by job id (one completion listener per queue, not one per job). */
  private readonly waiters = new Map<string, Map<string, (end: { ok: true; value: unknown } | { ok: false }) => void>>();
  /** Queues whose events reader has delivered an event: it reads on from there, so it misses no later job's end. */
  private readonly flowing = new Set<string>();
  constructor(readonly opts: HubOptions) {}

  queueNames(family: QueueFamilyName): string[] {
    const f = queueFamilies[family];
    return f.laned ? Array.from({ length: this.opts.lanes }, (_, k) => `${family}-${k}`) : [family];
  }

  allQueueNames(): string[] {
    return (Object.keys(queueFamilies) as QueueFamilyName[]).flatMap((f) => this.queueNames(f));
  }

  queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: redisConnection(this.opts.redisUrl), prefix: this.opts.prefix });
      q.setMaxListeners(0); // every waiting caller listens for 'closing'
      q.on('error', (err) => logger.warn({ queue: name, err }, 'queue connection error'));
      this.queues.set(name, q);
    }
    return q;
  }

  queueEvents(name: string): QueueEvents {
    let e = this.events.get(name);
    if (!e) {
      e = new QueueEvents(name, { connection: redisConnection(this.opts.redisUrl), prefix: this.opts.prefix });
      e.setMaxListeners(0); // one completion listener per waiting request
      e.on('error', (err) => logger.warn({ queue: name, err }, 'queue events connection error'));
      const waiting = new Map<string, (end: { ok: true; value: unknown } | { ok: false }) => void>();
      this.waiters.set(name, waiting);
      const settle = (jobId: string, end: { ok: true; value: unknown } | { ok: false }) => {
        this.flowing.add(name);
        const w = waiting.get(jobId);
        if (w) {
          waiting.delete(jobId);
          w(end);
        }
      };
      e.on('added', () => this.flowing.add(name));
      e.on('completed', ({ jobId, returnvalue }) => settle(jobId, { ok: true, value: returnvalue }));
      e.on('failed', ({ jobId }) => settle(jobId, { ok: false }));
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
    opts: JobsOptions & { laneKey?: string; waitMs: number; freshId?: boolean },
  ): Promise<{ finished: true; result: unknown } | { finished: false }> {
    const { waitMs, freshId, ...jobOpts } = opts;
    const name = this.queueFor(family, jobOpts.laneKey);
    const events = this.queueEvents(name);
    // A job id never used before (`freshId`) cannot have ended before its waiter is registered, so
    // once this queue's events flow no "already finished?" script is needed: the one listener
    // settles it. Otherwise BullMQ's own wait (which asks Redis once) is used.
    if (freshId && jobOpts.jobId && this.flowing.has(name)) {
      const jobId = jobOpts.jobId;
      const waiting = this.waiters.get(name)!;
      let timer: NodeJS.Timeout | undefined;
      const ended = new Promise<{ ok: true; value: unknown } | { ok: false }>((res) => {
        waiting.set(jobId, res);
        timer = setTimeout(() => res({ ok: false }), waitMs);
      });
      try {
        await withTimeout(this.enqueue(family, job, payload, jobOpts), waitMs);
        const end = await ended;
        return end.ok ? { finished: true, result: end.value } : { finished: false };
      } catch {
        return { finished: false };
      } finally {
        clearTimeout(timer);
        waiting.delete(jobId);
      }
    }
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
    for (const waiting of this.waiters.values()) for (const w of waiting.values()) w({ ok: false });
    this.waiters.clear();
    this.flowing.clear();
    await Promise.all([...this.events.values()].map((e) => e.close()));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.events.clear();
    this.queues.clear();
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
