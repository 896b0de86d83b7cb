import { channel } from 'node:diagnostics_channel';

/**
 * Where a trade batch's cycle goes, stage by stage (issue 29): the API's lane publishes when a batch
 * leaves and when its answer comes back, the lane worker when it starts, has read (the locks and
 * what they protect), has priced, and has written and committed. Published on a diagnostics channel,
 * which costs a check of `hasSubscribers` when nobody listens: the service subscribes to nothing
 * itself; a bench preloads a subscriber into the server (bench/timelineprobe.cjs, bench/cycle.ts).
 */
export const BATCH_TIMELINE_CHANNEL = 'mpps:trade-batch';

const timeline = channel(BATCH_TIMELINE_CHANNEL);

/**
 * A batch's stages, in the order each batch passes them. `answered` is the API's: usually after
 * `written`, but the commit's notice may reach the API before the COMMIT's reply reaches the worker.
 * A retried transaction marks `opened` and `priced` again, a retried job `started` too.
 */
export const BATCH_STAGES = ['sent', 'started', 'opened', 'priced', 'written', 'answered'] as const;
export type BatchStage = (typeof BATCH_STAGES)[number];

/**
 * One stage of one batch. `batch` is its first request's id (the job's id); `at` is wall-clock ms,
 * fractional (each process's start time plus its monotonic clock: processes on one host agree
 * unless the clock is stepped while they run).
 */
export interface BatchMark {
  batch: string;
  stage: BatchStage;
  at: number;
  /** `sent` only: the batch's requests, and when the first and the last of them reached the lane. */
  trades?: number;
  firstArrival?: number;
  lastArrival?: number;
}

/** Wall-clock ms with a fraction (performance's clock, from the process's time origin). */
export const timelineNow = (): number => performance.timeOrigin + performance.now();

/** Whether anybody listens (so a caller skips building a mark's fields when nobody does). */
export const timelineOn = (): boolean => timeline.hasSubscribers;

export function markBatch(batch: string, stage: BatchStage, extra?: Pick<BatchMark, 'trades' | 'firstArrival' | 'lastArrival'>): void {
  if (!timeline.hasSubscribers) return;
  const mark: BatchMark = { batch, stage, at: timelineNow(), ...extra };
  timeline.publish(mark);
}
