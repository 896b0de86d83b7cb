import type { Job } from 'bullmq';
import { z } from 'zod';
import { queueFamilies, resultSchema, type QueueFamilyName } from '../jobs/definitions';
import type { HubWorker } from '../jobs/hub';
import type { Deps } from '../src/deps';
import { closeAll } from '../src/closeAll';
import { logger } from '../src/logger';
import { EventPump, outboxProcessors } from './outbox';
import { webhookProcessors } from './webhooks';
import { chainProcessors } from './chain';
import { horizonProcessors } from './horizons';
import { standingsProcessors } from './standings';
import { tradeProcessors } from './trade';
import { telemetryProcessors } from './telemetry';
import { Watchdog } from './watchdog';
import { deletionProcessors } from './deletions';

type AnyProcessors = Record<string, (data: never, job: Job) => Promise<unknown>>;

/** One processor file per queue family; every declared job must map to exactly one handler. */
export function processorTable(deps: Deps): Record<QueueFamilyName, AnyProcessors> {
  return {
    trade: tradeProcessors(deps),
    horizons: horizonProcessors(deps),
    outbox: outboxProcessors(deps),
    webhooks: webhookProcessors(deps),
    chain: chainProcessors(deps),
    standings: standingsProcessors(deps),
    telemetry: telemetryProcessors(deps),
    deletions: deletionProcessors(deps),
  };
}

export function checkProcessors(table: Record<string, AnyProcessors>): void {
  const missing: string[] = [];
  for (const [family, def] of Object.entries(queueFamilies)) {
    const handlers = table[family] ?? {};
    for (const job of Object.keys(def.jobs)) if (typeof handlers[job] !== 'function') missing.push(`${family}.${job}`);
    for (const job of Object.keys(handlers)) if (!(job in def.jobs)) missing.push(`${family}.${job} (handler without a declared job)`);
    for (const job of Object.keys(def.jobs)) if (!resultSchema(family as QueueFamilyName, job)) missing.push(`${family}.${job} (no result schema)`);
  }
  if (missing.length) throw new Error(`Refusing to start: declared jobs without a processor: ${missing.join(', ')}`);
}

export interface WorkerSet {
  watchdog: Watchdog;
  close(): Promise<void>;
}

export async function startWorkers(deps: Deps): Promise<WorkerSet> {
  const table = processorTable(deps);
  checkProcessors(table);
  const workers: HubWorker[] = [];
  const watchdog = new Watchdog(deps);
  const pump = new EventPump(deps);
  const close = () => closeAll([() => watchdog.stop(), () => pump.stop(), workers.map((w) => () => w.close())]);
  try {
    await openWorkers(deps, table, workers);
    // Pending requests are recovered (the watchdog's first tick) once workers run.
    await watchdog.start();
    pump.start();
  } catch (err) {
    // A start that fails half-way (a connection lost) leaves no worker taking jobs behind it.
    await close().catch((e: Error) => logger.warn({ err: e }, 'closing the workers of a failed start'));
    throw err;
  }
  return { watchdog, close };
}

/** One worker per queue (lanes given their concurrency first), ready to take jobs. */
async function openWorkers(deps: Deps, table: ReturnType<typeof processorTable>, workers: HubWorker[]): Promise<void> {
  const serial = deps.config.TRADE_LANES_SERIAL;
  for (const family of Object.keys(queueFamilies) as QueueFamilyName[]) {
    const def = queueFamilies[family];
    for (const name of deps.hub.queueNames(family)) {
      if (def.laned && serial) await deps.hub.queue(name).setGlobalConcurrency(1);
      const laneOpts = def.laned
        ? {
            concurrency: serial ? 1 : 4,
            // A dead worker's job goes back to its lane within lock + check interval; a live one renews
            // its lock every half lock, so a slow job is never taken from a live worker.
            lockDuration: deps.config.TRADE_LANE_LOCK_MS,
            stalledInterval: deps.config.TRADE_LANE_STALLED_CHECK_MS,
            maxStalledCount: 3,
          }
        : { concurrency: 'concurrency' in def ? def.concurrency : 4 };
      const w = deps.hub.worker(
        name,
        async (job: Job) => {
          const handler = table[family][job.name];
          if (!handler) throw new Error(`no processor for ${family}.${job.name}`);
          const schema = (def.jobs as Record<string, z.ZodType>)[job.name];
          // The result as it travels (JSON): bigints become strings here, and back in enqueueAndWait.
          return z.encode(resultSchema(family, job.name)!, await handler(schema.parse(job.data) as never, job));
        },
        laneOpts,
      );
      w.on('failed', (job, err) => logger.warn({ queue: name, job: job?.name, jobId: job?.id, err }, 'job failed'));
      w.on('error', (err) => logger.warn({ queue: name, err }, 'worker connection error'));
      workers.push(w);
    }
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
}
