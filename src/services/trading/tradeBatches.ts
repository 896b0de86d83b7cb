import { tradeRequest } from '../../../jobs/definitions';
import { poolPrepared } from '../../db/prepared';
import type { Deps } from '../../deps';
import { logger } from '../../logger';
import { isKeyTaken, type TradeJobData } from './tradeRequests';
import type { TradeOutcome } from '../../domain/outcomes';
import { outcomeEar } from './outcomeNotices';
import { markBatch, timelineNow, timelineOn } from './batchTimeline';
import { applyTradeBatch } from './applyTrade';

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
  /** Not applied: its Idempotency-Key (scoped to participant and workspace) is held by another request. */
  | { kind: 'taken' }
  /** Enqueued, but the outcome did not come back in time: journalled pending (Postgres has the truth). */
  | { kind: 'unknown'; requestId: string };

interface Waiting {
  job: TradeJobData;
  /** When it reached the lane (batchTimeline's clock; 0 while nobody listens). */
  arrivedAt: number;
  resolve(a: BatchAnswer): void;
  reject(err: unknown): void;
}

interface Lane {
  /** Arrived, waiting for the lane's next batch. */
  waiting: Waiting[];
  /** This process's batches of the lane enqueued and not yet answered. */
  inFlight: number;
  /** Callers about the lane when its last batch was answered (those answered and those waiting), and when (lingerLeft). */
  around: number;
  answeredAt: number;
  /** The running wait for the answered callers to come back, if any. */
  lingerTimer?: NodeJS.Timeout;
  /** Batches to send without waiting, after a wait in which the callers did not come back. */
  noLinger: number;
  /** Whether nothing arrived in this process while the lane's last batch was in flight (its callers were all in it: a closed group). */
  quiet: boolean;
}

/** After a wait that ran out, this many batches go without one: callers that do not come back at once (an open load, far clients) cost a wait only now and then. */
const LINGER_BACKOFF = 16;

/** How much longer than TRADE_BATCH_LINGER_MS a lane waits for a closed group (Lane.quiet): on a slow machine, the last of eight callers came back 10-16 ms after their answer in one round in ten. */
const QUIET_LINGER_FACTOR = 2;

/**
 * How many batches go without a wait after a wait ran out. A closed group (nothing arrived while its
 * batch was in flight: every caller about was in it) of which more than half came back in the wait
 * has a straggler, not callers that are gone: it keeps waiting (0), or else each straggler would
 * split the group into batches of one and two for LINGER_BACKOFF batches, each paying the batch's
 * fixed cost (issue 29 step 18). Otherwise (an open load, far clients): LINGER_BACKOFF.
 */
export function backoffAfterWait(p: { quiet: boolean; owed: number; returning: number }): number {
  const back = p.owed - p.returning;
  return p.quiet && back * 2 > p.owed ? 0 : LINGER_BACKOFF;
}

/**
 * How long a free lane waits before sending what is waiting (0: send now). Under a steady load the
 * callers split into two groups that take turns: one group's batch applies while the other's
 * requests wait for it, so a trade pays two batches' fixed costs (the queue's hop, the transaction's
 * statements and commit) per round. When the callers a batch answered send again within a moment
 * (TRADE_BATCH_LINGER_MS), they and the group that waited can go as one batch: one fixed cost for
 * both. `returning` counts the callers this process answered that have not sent again yet (any
 * arrival counts one back: a caller's next trade may go to another lane). The lanes split the
 * callers the same way: with several lanes in flight at once, each batch is small. So the lane also
 * waits while this process has batches in flight on other lanes (`othersInFlight`: their callers),
 * as long as those callers and what waits here fit in one batch: once they are answered, the free
 * lanes' requests go together (LaneBatches.take). Under a heavy load they would not fit, and the
 * lanes run side by side. It waits until none is out and no other lane is in flight, until it has
 * a full batch, or for `lingerMs` after its answer (the lane passes twice TRADE_BATCH_LINGER_MS for a closed group: Lane.quiet), whichever comes first. `around` is how many callers were about the lane when it answered
 * (those answered and those waiting, 0 after a wait ran out): under 2, it does not wait, so a lone
 * caller never waits.
 */
export function lingerLeft(p: { lingerMs: number; batchMax: number; around: number; returning: number; othersInFlight: number; waiting: number; answeredAt: number; now: number }): number {
  const othersFit = p.othersInFlight > 0 && p.waiting + p.othersInFlight < p.batchMax;
  if (p.lingerMs <= 0 || p.around < 2 || (p.returning <= 0 && !othersFit) || p.waiting >= p.batchMax) return 0;
  return Math.max(0, p.answeredAt + p.lingerMs - p.now);
}

/**
 * The API's side of the trade lanes. What arrives for a lane goes out at once when the lane has
 * fewer than TRADE_BATCH_INFLIGHT of this process's batches in flight (unless the lane waits a
 * moment for the callers just answered: lingerLeft), otherwise with the others that arrive
 * meanwhile (up to TRADE_BATCH_MAX), carried by one lane job and answered by one notice
 * (committed by the batch's own write, heard on this process's LISTEN): the queue's cost is paid
 * per batch, not per trade, and at one trader nothing waits. Nothing is written before the batch:
 * its transaction writes each request's journal row (Idempotency-Key, outcome) with its trade, so a
 * trade costs one commit. A request whose outcome does not come back in time (the job lost with
 * Redis, a worker away, a notice missed) is journalled then, pending with its job, and the watchdog
 * or a keyed retry runs it. Arrival order per market is kept: a lane's batches are enqueued in the
 * order they form, and a lane runs one job at a time.
 */
class LaneBatches {
  private readonly lanes = new Map<string, Lane>();
  private count = 0;
  /** Callers answered that have not sent again (lingerLeft), as of the last answer. */
  private returning = 0;
  /** `returning` right after the last answer: the callers owed back then. */
  private owed = 0;
  private lastAnswerAt = 0;
  /** This process's batches in flight: the lanes each counts as its own, its callers, and `count` when it went. */
  private readonly flying = new Set<{ lanes: Lane[]; callers: number; sentAt: number }>();
  constructor(private readonly deps: Deps) {}

  submit(job: TradeJobData): Promise<BatchAnswer> {
    const name = this.deps.hub.queueFor('trade', job.marketId);
    let lane = this.lanes.get(name);
    if (!lane) this.lanes.set(name, (lane = { waiting: [], inFlight: 0, around: 0, answeredAt: 0, noLinger: 0, quiet: false }));
    this.count++;
    const answer = new Promise<BatchAnswer>((resolve, reject) => lane.waiting.push({ job, arrivedAt: timelineOn() ? timelineNow() : 0, resolve, reject }));
    if (this.returning > 0) this.returning--;
    this.pump(lane);
    // The last caller out is back: the lanes waiting for it (those with a wait's timer) go.
    if (this.returning === 0) for (const other of this.lanes.values()) if (other.lingerTimer) this.pump(other);
    return answer;
  }

  /** Requests handed to this process's lanes so far (the order they were handed in is the order they apply in). */
  received(): number {
    return this.count;
  }

  private pump(lane: Lane): void {
    while (lane.inFlight < this.deps.config.TRADE_BATCH_INFLIGHT && lane.waiting.length) {
      if (this.lingers(lane)) return;
      const { lanes, batch } = this.take(lane);
      const flight = { lanes, callers: batch.length, sentAt: this.count };
      this.flying.add(flight);
      // Nothing else of this process is in flight on the batch's lanes: it owns their turn.
      this.send(batch, lanes.every((l) => l.inFlight === 1))
        .catch((err: unknown) => batch.forEach((w) => w.reject(err)))
        .finally(() => {
          this.flying.delete(flight);
          this.answered(lanes, batch.length, this.count === flight.sentAt);
        });
    }
  }

  /**
   * The lane's next batch, and with it what waits on the other lanes that have none of this
   * process's batches in flight, as long as it all fits in one batch: requests split over lanes by
   * their markets go together when nothing of theirs is in flight (so their order is not at stake).
   * The job goes on the lane of its first request; a lane whose requests ride along counts the batch
   * as its own in flight.
   */
  private take(lane: Lane): { lanes: Lane[]; batch: Waiting[] } {
    const max = this.deps.config.TRADE_BATCH_MAX;
    const lanes = [lane];
    const batch = lane.waiting.splice(0, max);
    if (!lane.waiting.length)
      for (const other of this.lanes.values())
        if (other !== lane && other.inFlight === 0 && other.waiting.length && batch.length + other.waiting.length <= max) {
          batch.push(...other.waiting.splice(0));
          lanes.push(other);
        }
    for (const l of lanes) {
      clearTimeout(l.lingerTimer);
      l.lingerTimer = undefined;
      l.around = 0;
      l.inFlight++;
    }
    return { lanes, batch };
  }

  private answered(lanes: Lane[], callers: number, quiet: boolean): void {
    const now = performance.now();
    // Callers answered longer ago than a wait lasts are not waited for any more.
    if (now - this.lastAnswerAt > this.deps.config.TRADE_BATCH_LINGER_MS) this.returning = 0;
    this.returning += callers;
    this.owed = this.returning;
    this.lastAnswerAt = now;
    for (const l of lanes) {
      l.inFlight--;
      l.quiet = quiet;
      l.around = l.noLinger > 0 ? 0 : callers + l.waiting.length;
      l.noLinger = Math.max(0, l.noLinger - 1);
      l.answeredAt = now;
    }
    // The batch's lanes go on; the lanes waiting for it (those with a wait's timer) may go too.
    for (const l of this.lanes.values()) if (lanes.includes(l) || l.lingerTimer) this.pump(l);
  }

  /** Whether the free lane waits (lingerLeft) for the callers just answered and the other lanes' batches in flight; the wait's timer sends what is there when it runs out. */
  private lingers(lane: Lane): boolean {
    const c = this.deps.config;
    let othersInFlight = 0;
    for (const f of this.flying) if (!f.lanes.includes(lane)) othersInFlight += f.callers;
    const left = lingerLeft({
      // A closed group's callers all come back: it may wait for its last ones twice as long.
      lingerMs: lane.quiet ? QUIET_LINGER_FACTOR * c.TRADE_BATCH_LINGER_MS : c.TRADE_BATCH_LINGER_MS,
      batchMax: c.TRADE_BATCH_MAX,
      around: lane.around,
      returning: this.returning,
      othersInFlight,
      waiting: lane.waiting.length,
      answeredAt: lane.answeredAt,
      now: performance.now(),
    });
    if (left <= 0) return false;
    lane.lingerTimer ??= setTimeout(() => {
      lane.lingerTimer = undefined;
      lane.around = 0; // what is there goes
      lane.noLinger = backoffAfterWait({ quiet: lane.quiet, owed: this.owed, returning: this.returning });
      this.pump(lane);
    }, left);
    return true;
  }

  private async send(batch: Waiting[], owned: boolean): Promise<void> {
    const first = batch[0].job;
    if (timelineOn()) {
      const arrivals = batch.map((w) => w.arrivedAt);
      // A request that arrived before anybody listened has no arrival time: the batch goes without them.
      const known = arrivals.every((a) => a > 0);
      markBatch(first.requestId, 'sent', known ? { trades: batch.length, firstArrival: Math.min(...arrivals), lastArrival: Math.max(...arrivals) } : { trades: batch.length });
    }
    if (owned && this.deps.config.TRADE_APPLY_AT_ONCE && (await this.applyHere(batch))) return;
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
    markBatch(first.requestId, 'answered');
    if (waited.finished) {
      const outcomes = waited.result.outcomes;
      answerWith(batch, outcomes);
      return;
    }
    await this.answerUnheard(batch);
    // The queue's connection dropped or came back: the batch's job may be gone with Redis. Once
    // Redis answers, its still-pending requests go on the lane again (the callers meanwhile read
    // their outcomes from Postgres), rather than at the watchdog's next pass.
    if (waited.interrupted) void this.requeueWhenBack(batch.map((w) => w.job));
  }

  /**
   * The batch applied in this process, at once (issue 66): the lane worker's own transaction
   * (applyTradeBatch), without the queue's hop, the worker's pick-up and the commit's notice. Only
   * when this process has nothing else in flight on the batch's lanes, so its arrival order holds;
   * a request of another process (or a job the queue still holds) is one whose caller has no answer
   * yet, concurrent with these, and the book's row lock orders the two. Exactly-once is the
   * journal's, as on the lane: the transaction writes each request's row with its trade, and a
   * batch that fails here for any reason (a lost connection, a key sent to two lanes at once) goes
   * on its lane as before, where a request already applied is a no-op. False: it did not apply here.
   */
  private async applyHere(batch: Waiting[]): Promise<boolean> {
    const jobs = batch.map((w) => w.job);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((res) => (timer = setTimeout(() => res('late'), this.deps.config.TRADE_WAIT_MS)));
    const applying = applyTradeBatch(this.deps, jobs, { announce: false });
    let outcomes: TradeOutcome[] | 'late';
    try {
      outcomes = await Promise.race([applying, late]);
    } catch (err) {
      logger.warn({ err, requestId: jobs[0].requestId }, 'a trade batch did not apply in process; it goes on its lane');
      return false;
    } finally {
      clearTimeout(timer);
    }
    if (outcomes === 'late') {
      // Held up past the caller's deadline (a lock another transaction keeps): journalled pending with
      // its jobs, as a batch not heard in time is; the transaction's own write, if it commits, settles them.
      applying.catch(() => undefined);
      await this.answerUnheard(batch);
      return true;
    }
    markBatch(jobs[0].requestId, 'answered');
    answerWith(batch, outcomes);
    return true;
  }

  /** A batch whose outcomes did not come back in time: journalled pending (journal), each answered unknown, or taken when another request holds its key. */
  private async answerUnheard(batch: Waiting[]): Promise<void> {
    const held = await this.journal(batch.map((w) => w.job));
    batch.forEach((w) => w.resolve(held.has(w.job.requestId) ? { kind: 'unknown', requestId: w.job.requestId } : { kind: 'taken' }));
  }

  /**
   * Requests whose outcome was not heard are journalled pending with their jobs (so none is lost
   * while its job may be), unless their batch wrote them meanwhile. Returns the requests that have a
   * row now; one without (its key was held by another request's row) was refused by its batch, or will be.
   */
  private async journal(jobs: TradeJobData[]): Promise<Set<string>> {
    const ids = jobs.map((j) => j.requestId);
    await poolPrepared(
      this.deps.ds,
      `INSERT INTO trade_requests (request_id, agent_id, workspace_id, idempotency_key, body_hash, status, job)
       SELECT r, a, w, k, h, 'pending', j FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[]) AS x(r, a, w, k, h, j)
       ON CONFLICT DO NOTHING`,
      [ids, jobs.map((j) => j.agentId), jobs.map((j) => j.workspaceId), jobs.map((j) => j.key ?? null), jobs.map((j) => j.hash ?? null), jobs.map((j) => JSON.stringify(j))],
    );
    // A statement of its own: its snapshot sees a batch's row that the INSERT above waited for.
    const rows = await poolPrepared<{ request_id: string }>(this.deps.ds, `SELECT request_id FROM trade_requests WHERE request_id = ANY($1::text[])`, [ids]);
    return new Set(rows.map((r) => r.request_id));
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

/** Each request of a batch answered with its outcome, in order (a key another request holds: taken). */
function answerWith(batch: Waiting[], outcomes: readonly TradeOutcome[]): void {
  batch.forEach((w, i) => w.resolve(isKeyTaken(outcomes[i]) ? { kind: 'taken' } : { kind: 'outcome', outcome: outcomes[i] }));
}

const batches = new WeakMap<Deps, LaneBatches>();

/** This process's lane batches (one per deps). */
export function laneBatches(deps: Deps): LaneBatches {
  let b = batches.get(deps);
  if (!b) batches.set(deps, (b = new LaneBatches(deps)));
  return b;
}
