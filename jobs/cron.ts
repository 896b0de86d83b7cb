import type { Job } from 'bullmq';
import type { JobHub } from './hub';

const minuteKey = () => Math.floor(Date.now() / 60_000);
const hourKey = () => Math.floor(Date.now() / 3_600_000);

/** The cron table: what the scheduler enqueues, and when (node-cron syntax, seconds first). */
export const cronTable: Array<{ name: string; schedule: string; fire: (hub: JobHub) => Promise<Job> }> = [
  { name: 'horizons-hourly', schedule: '0 0 * * * *', fire: (hub) => hub.enqueue('horizons', 'refresh', {}, { jobId: `refresh-hourly-${hourKey()}` }) },
  { name: 'horizons-minute', schedule: '5 * * * * *', fire: (hub) => hub.enqueue('horizons', 'refresh', { minuteOnly: true }, { jobId: `refresh-minute-${minuteKey()}` }) },
  { name: 'resolve-due', schedule: '10 * * * * *', fire: (hub) => hub.enqueue('horizons', 'resolveDue', {}, { jobId: `resolve-due-${minuteKey()}` }) },
  { name: 'purge-requests', schedule: '0 17 * * * *', fire: (hub) => hub.enqueue('horizons', 'purgeRequests', {}, { jobId: `purge-${hourKey()}` }) },
  { name: 'outbox-relay', schedule: '*/2 * * * * *', fire: (hub) => hub.enqueue('outbox', 'relay', {}, { jobId: 'relay' }) },
];
