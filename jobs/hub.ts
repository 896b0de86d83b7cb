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

  async close(): Promise<void> {
    await Promise.all([...this.events.values()].map((e) => e.close()));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.events.clear();
    this.queues.clear();
  }
}
