import type { JobHub } from './hub';

/** The cron table: what the scheduler enqueues, and when (node-cron syntax, seconds first). */
export const cronTable: Array<{ name: string; schedule: string; fire: (hub: JobHub) => Promise<unknown> }> = [
  { name: 'outbox-relay', schedule: '*/2 * * * * *', fire: (hub) => hub.enqueue('outbox', 'relay', {}, { jobId: 'relay' }) },
];
