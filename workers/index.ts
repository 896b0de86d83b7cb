import { Worker, type Job } from 'bullmq';
import { queueFamilies, type QueueFamilyName } from '../jobs/definitions';
import { redisConnection } from '../jobs/hub';
import type { Deps } from '../src/deps';
import { logger } from '../src/logger';
import { outboxProcessors } from './outbox';
import { horizonProcessors } from './horizons';
import { tradeProcessors } from './trade';

type AnyProcessors = Record<string, (data: never, job: Job) => Promise<unknown>>;

/** One processor file per queue family; every declared job must map to exactly one handler. */
export function processorTable(deps: Deps): Record<QueueFamilyName, AnyProcessors> {
  return {
    trade: tradeProcessors(deps),
    horizons: horizonProcessors(deps),
    outbox: outboxProcessors(deps),
  };
}

export function checkProcessors(table: Record<string, AnyProcessors>): void {
  const missing: string[] = [];
  for (const [family, def] of Object.entries(queueFamilies)) {
    const handlers = table[family] ?? {};
    for (const job of Object.keys(def.jobs)) if (typeof handlers[job] !== 'function') missing.push(`${family}.${job}`);
    for (const job of Object.keys(handlers)) if (!(job in def.jobs)) missing.push(`${family}.${job} (handler without a declared job)`);
  }
  if (missing.length) throw new Error(`Refusing to start: declared jobs without a processor: ${missing.join(', ')}`);
}

export interface WorkerSet {
  close(): Promise<void>;
}

export async function startWorkers(deps: Deps): Promise<WorkerSet> {
  const table = processorTable(deps);
  checkProcessors(table);
  const workers: Worker[] = [];
  for (const family of Object.keys(queueFamilies) as QueueFamilyName[]) {
    const def = queueFamilies[family];
    for (const name of deps.hub.queueNames(family)) {
      if (def.laned) await deps.hub.queue(name).setGlobalConcurrency(1);
      const w = new Worker(
        name,
        async (job) => {
          const handler = table[family][job.name];
          if (!handler) throw new Error(`no processor for ${family}.${job.name}`);
          const schema = (def.jobs as Record<string, import('zod').ZodType>)[job.name];
          return handler(schema.parse(job.data) as never, job);
        },
        { connection: redisConnection(deps.config.redisUrl), prefix: deps.config.QUEUE_PREFIX, concurrency: def.laned ? 1 : 4 },
      );
      w.on('failed', (job, err) => logger.warn({ queue: name, job: job?.name, jobId: job?.id, err: err.message }, 'job failed'));
      w.on('error', (err) => logger.error({ queue: name, err: err.message }, 'worker error'));
      workers.push(w);
    }
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return {
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
