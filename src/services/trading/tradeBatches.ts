import { tradeRequest } from '../../../jobs/definitions';
import { poolPrepared } from '../../db/prepared';
import type { Deps } from '../../deps';
import { logger } from '../../logger';
import type { TradeJobData } from './tradeRequests';
import type { TradeOutcome } from '../../domain/outcomes';
import { outcomeEar } from './outcomeNotices';

/**
 * Job options of every trade job. A job's id is its first request's id, so enqueueing it again while
 * it waits or runs adds nothing. A finished trade job is not kept: nothing reads it (the outcomes are
 * in the journal and the notice); a job enqueued again after it finished applies nothing twice (its
 * requests have their outcomes), and a pending request whose job is gone is enqueued again by the watchdog.
 */
export const TRADE_JOB_OPTS = { attempts: 3, backoff: { type: 'exponential', delay: 50 }, removeOnComplete: true } as const;

/** How long a batch cut off by a Redis drop waits for Redis to re-enqueue itself; after that the watchdog does. */
const REQUEUE_WITHIN_MS = 60_000;

/** What became of a request handed to its lane's batch. */
export type BatchAnswer =
  | { kind: 'outcome'; outcome: TradeOutcome }
  /** Not journalled: its Idempotency-Key (scoped to participant and workspace) is already taken. */
  | { kind: 'taken' }
  /** Journalled and enqueued, but the outcome did not come back in time (Postgres has the truth). */
  | { kind: 'unknown'; requestId: string };

interface Waiting {
  job: TradeJobData;
  idempotencyKey?: string;
  hash: string;
  resolve(a: BatchAnswer): void;
  reject(err: unknown): void;
}

interface Lane {
  /** Arrived, not yet journalled. */
  waiting: Waiting[];
  /** A journal INSERT of the lane's is under way (one at a time keeps the order). */
  journalling: boolean;
  /** Journalled (pending rows carrying their jobs), waiting for the lane's next batch. */
  ready: Waiting[];
  /** This process's batches of the lane enqueued and not yet answered. */
  inFlight: number;
}

/**
 * The API's side of the trade lanes, two stages per lane. The journal: what arrived is journalled
 * in one INSERT (pending rows carrying their jobs, so none can be lost; a taken Idempotency-Key is
 * answered here), one INSERT at a time, and it runs while the lane's batch is in the worker, so its
 * commit is off the lane's cycle. The batch: what is journalled goes out at once when the lane has
 * fewer than TRADE_BATCH_INFLIGHT of this process's batches in flight, otherwise with the others
 * journalled meanwhile (up to TRADE_BATCH_MAX), carried by one lane job and answered by one notice
 * (committed by the batch's own write, heard on this process's LISTEN): the queue's and the
 * journal's costs are paid per batch, not per trade, and at one trader nothing waits. Arrival order
 * per market is kept: each stage takes its lane's requests in order, a lane's batches are enqueued
 * in the order they form, and a lane runs one job at a time.
 */
class LaneBatches {
  private readonly lanes = new Map<string, Lane>();
  private count = 0;
  constructor(private readonly deps: Deps) {}

  submit(job: TradeJobData, idempotencyKey: string | undefined, hash: string): Promise<BatchAnswer> {
    const name = this.deps.hub.queueFor('trade', job.marketId);
    let lane = this.lanes.get(name);
    if (!lane) this.lanes.set(name, (lane = { waiting: [], journalling: false, ready: [], inFlight: 0 }));
    this.count++;
    const answer = new Promise<BatchAnswer>((resolve, reject) => lane.waiting.push({ job, idempotencyKey, hash, resolve, reject }));
    this.pump(lane);
    return answer;
  }

  /** Requests handed to this process's lanes so far (the order they were handed in is the order they apply in). */
  received(): number {
    return this.count;
  }

  private pump(lane: Lane): void {
    const max = this.deps.config.TRADE_BATCH_MAX;
    if (!lane.journalling && lane.waiting.length) {
      const part = lane.waiting.splice(0, max);
      lane.journalling = true;
      this.journal(part)
        .then((go) => lane.ready.push(...go))
        .catch((err: unknown) => part.forEach((w) => w.reject(err)))
        .finally(() => {
          lane.journalling = false;
          this.pump(lane);
        });
    }
    while (lane.inFlight < this.deps.config.TRADE_BATCH_INFLIGHT && lane.ready.length) {
      const batch = lane.ready.splice(0, max);
      lane.inFlight++;
      this.send(batch)
        .catch((err: unknown) => batch.forEach((w) => w.reject(err)))
        .finally(() => {
          lane.inFlight--;
          this.pump(lane);
        });
    }
  }

  /**
   * One INSERT journals the requests (pending rows carrying their jobs). ON CONFLICT DO NOTHING: a
   * request whose key is taken (by an earlier call or a twin in this very INSERT) is left out and
   * answered 'taken' (the caller replays or waits for the holder); the rest come back in order.
   */
  private async journal(part: Waiting[]): Promise<Waiting[]> {
    const col = <T>(f: (w: Waiting) => T) => part.map(f);
    const rows = await poolPrepared<{ request_id: string }>(
      this.deps.ds,
      `INSERT INTO trade_requests (request_id, agent_id, workspace_id, idempotency_key, body_hash, status, job)
       SELECT r, a, w, k, h, 'pending', j FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[]) AS x(r, a, w, k, h, j)
       ON CONFLICT DO NOTHING RETURNING request_id`,
      [
        col((w) => w.job.requestId),
        col((w) => w.job.agentId),
        col((w) => w.job.workspaceId),
        col((w) => w.idempotencyKey ?? null),
        col((w) => (w.idempotencyKey ? w.hash : null)),
        col((w) => JSON.stringify(w.job)),
      ],
    );
    const journalled = new Set(rows.map((r) => r.request_id));
    for (const w of part) if (!journalled.has(w.job.requestId)) w.resolve({ kind: 'taken' });
    return part.filter((w) => journalled.has(w.job.requestId));
  }

  private async send(batch: Waiting[]): Promise<void> {
    const first = batch[0].job;
    // The outcomes come in the notice of the batch's own commit (registered before the enqueue).
    const heard = await outcomeEar(this.deps).watch(batch.map((w) => w.job.requestId));
    const waited = await this.deps.hub
      .enqueueAndHear(
        'trade',
        'trade',
        { trades: batch.map((w) => w.job) },
        { jobId: first.requestId, laneKey: first.marketId, ...TRADE_JOB_OPTS, waitMs: this.deps.config.TRADE_WAIT_MS, ended: heard.ended },
      )
      .finally(heard.dispose);
    const outcomes = waited.finished ? waited.result.outcomes : undefined;
    batch.forEach((w, i) => w.resolve(outcomes?.[i] ? { kind: 'outcome', outcome: outcomes[i] } : { kind: 'unknown', requestId: w.job.requestId }));
    // The queue's connection dropped or came back: the batch's job may be gone with Redis. Once
    // Redis answers, its still-pending requests go on the lane again (the callers meanwhile read
    // their outcomes from Postgres), rather than at the watchdog's next pass.
    if (!waited.finished && waited.interrupted) void this.requeueWhenBack(batch.map((w) => w.job));
  }

  private async requeueWhenBack(jobs: TradeJobData[]): Promise<void> {
    const lane = this.deps.hub.queueFor('trade', jobs[0].marketId);
    try {
      if (await this.deps.hub.whenConnected(lane, REQUEUE_WITHIN_MS)) await this.requeuePending(jobs.map((j) => j.requestId));
    } catch (err) {
      logger.warn({ err, queue: lane }, 'a cut-off batch could not be enqueued again; the watchdog will');
    }
  }

  /**
   * The batch's requests the journal still holds pending go on their lane again as one job, in their
   * order. Its id is the first pending request's: the batch's own id while none has applied (a job
   * Redis still has is not added twice), and a request applied meanwhile is a no-op in the worker.
   */
  private async requeuePending(requestIds: string[]): Promise<void> {
    const rows: Array<{ request_id: string; job: unknown }> = await this.deps.ds.query(
      `SELECT request_id, job FROM trade_requests WHERE request_id = ANY($1::text[]) AND status = 'pending'`,
      [requestIds],
    );
    const byId = new Map(rows.map((r) => [r.request_id, tradeRequest.safeParse(r.job)]));
    const trades = requestIds.flatMap((id) => {
      const parsed = byId.get(id);
      return parsed?.success ? [parsed.data] : [];
    });
    if (!trades.length) return;
    await this.deps.hub.enqueue('trade', 'trade', { trades }, { jobId: trades[0].requestId, laneKey: trades[0].marketId, ...TRADE_JOB_OPTS });
    logger.info({ requests: trades.length, jobId: trades[0].requestId }, 'trade batch enqueued again after the queue connection came back');
  }
}

const batches = new WeakMap<Deps, LaneBatches>();

/** This process's lane batches (one per deps). */
export function laneBatches(deps: Deps): LaneBatches {
  let b = batches.get(deps);
  if (!b) batches.set(deps, (b = new LaneBatches(deps)));
  return b;
}
