import type { Job } from 'bullmq';
import type { JobHub } from './hub';

const minuteKey = (at: Date) => Math.floor(at.getTime() / 60_000);
const hourKey = (at: Date) => Math.floor(at.getTime() / 3_600_000);

/**
 * The cron table: what the scheduler enqueues, and when (node-cron syntax, seconds first). A fire
 * at instant `at` gets a job id from its minute or hour, so instances firing together enqueue once.
 */
export const cronTable: Array<{ name: string; schedule: string; fire: (hub: JobHub, at: Date) => Promise<Job> }> = [
  { name: 'horizons-hourly', schedule: '0 0 * * * *', fire: (hub, at) => hub.enqueue('horizons', 'refresh', {}, { jobId: `refresh-hourly-${hourKey(at)}` }) },
  { name: 'horizons-minute', schedule: '5 * * * * *', fire: (hub, at) => hub.enqueue('horizons', 'refresh', { minuteOnly: true }, { jobId: `refresh-minute-${minuteKey(at)}` }) },
  { name: 'resolve-due', schedule: '10 * * * * *', fire: (hub, at) => hub.enqueue('horizons', 'resolveDue', {}, { jobId: `resolve-due-${minuteKey(at)}` }) },
  { name: 'expire-orders', schedule: '20 * * * * *', fire: (hub, at) => hub.enqueue('horizons', 'expireOrders', {}, { jobId: `expire-orders-${minuteKey(at)}` }) },
  { name: 'purge-requests', schedule: '0 17 * * * *', fire: (hub, at) => hub.enqueue('horizons', 'purgeRequests', {}, { jobId: `purge-${hourKey(at)}` }) },
  { name: 'standings-sweep', schedule: '30 * * * * *', fire: (hub, at) => hub.enqueue('standings', 'sweep', {}, { jobId: `standings-sweep-${minuteKey(at)}` }) },
  { name: 'outbox-relay', schedule: '*/2 * * * * *', fire: (hub) => hub.enqueue('outbox', 'relay', {}, { jobId: 'relay' }) },
  { name: 'purge-telemetry', schedule: '0 29 * * * *', fire: (hub, at) => hub.enqueue('telemetry', 'purge', {}, { jobId: `purge-telemetry-${hourKey(at)}` }) },
  { name: 'deletions-sweep', schedule: '40 * * * * *', fire: (hub, at) => hub.enqueue('deletions', 'sweep', {}, { jobId: `deletions-sweep-${minuteKey(at)}` }) },
  { name: 'purge-events', schedule: '0 23 * * * *', fire: (hub, at) => hub.enqueue('outbox', 'purge', {}, { jobId: `purge-events-${hourKey(at)}` }) },
];
