import { tradeOutcomes } from '../../../jobs/definitions';
import type { Deps } from '../../deps';
import { pgNotices, type PgNotices } from '../../db/notices';
import type { TradeOutcome } from '../../domain/outcomes';
import { logger } from '../../logger';
import { signalWithin } from '../../signals';

/** Where a lane batch's write announces its outcomes (pg_notify inside the batch's transaction). */
export const TRADE_OUTCOMES_CHANNEL = 'trade_outcomes';
/**
 * The SQL that announces a batch's notices (pg_notify, delivered at commit), given as one parameter at
 * `$at` holding `noticesParam(notices)`; it yields how many were sent.
 */
export function announceSql(at: number): string {
  return `SELECT count(pg_notify('${TRADE_OUTCOMES_CHANNEL}', n)) FROM json_array_elements_text($${at}::json) AS n`;
}

/** The notices as announceSql's parameter: one JSON array of their texts (JSON.stringify escapes their quotes natively, where node-postgres's text-array encoding ran two regular expressions over each). */
export function noticesParam(notices: readonly string[]): string {
  return JSON.stringify(notices);
}

/** Postgres refuses a notice payload of 8000 bytes or more. */
const MAX_NOTICE_BYTES = 7900;
/** How long a first trade waits for the LISTEN to take effect before it relies on polling instead. */
const LIVE_WITHIN_MS = 2000;

type Pair = [requestId: string, outcome: TradeOutcome | null];

/** A notice's first request id (outcomeNotices writes each pair as JSON.stringify([id, outcome]); ids are uuids). */
const FIRST_ID = /^\[\["([^"\\]*)"/;

/**
 * The notices of a batch's outcomes: JSON arrays of [requestId, outcome] pairs, each under Postgres'
 * payload limit. An outcome too large for any notice is announced as null (its waiter reads the journal).
 */
export function outcomeNotices(requestIds: readonly string[], outcomes: readonly TradeOutcome[]): string[] {
  const out: string[] = [];
  let chunk: string[] = [];
  let bytes = 2;
  const flush = () => {
    if (chunk.length) out.push(`[${chunk.join(',')}]`);
    chunk = [];
    bytes = 2;
  };
  requestIds.forEach((id, i) => {
    let pair = JSON.stringify([id, outcomes[i]] satisfies Pair);
    if (Buffer.byteLength(pair) + 2 > MAX_NOTICE_BYTES) pair = JSON.stringify([id, null] satisfies Pair);
    const size = Buffer.byteLength(pair) + 1;
    if (bytes + size > MAX_NOTICE_BYTES) flush();
    chunk.push(pair);
    bytes += size;
  });
  flush();
  return out;
}

/**
 * The API's ear for lane batches: each request waits for its outcome in the notice its batch's own
 * transaction commits (no event-stream reads per batch). Nothing heard is not nothing done: a waiter
 * whose notice cannot come (the LISTEN is down or was lost, an outcome too large for a notice) is
 * told at once, and its caller reads the journal, which has the truth.
 */
class OutcomeEar {
  private readonly waiting = new Map<string, (o: TradeOutcome | null) => void>();
  private readonly onLive = new Set<() => void>();
  private readonly notices: PgNotices;

  constructor(deps: Deps) {
    this.notices = pgNotices(deps);
    this.notices.subscribe(TRADE_OUTCOMES_CHANNEL, {
      notice: (payload) => this.heard(payload),
      live: (up) => {
        if (up) for (const f of [...this.onLive]) f();
        else for (const id of [...this.waiting.keys()]) this.settle(id, null);
      },
    });
  }

  /**
   * A notice's payload (a JSON array of [requestId, outcome] pairs): each waiter it names is settled,
   * once. A notice's requests are one batch's, all watched by one process or none, and this process
   * often settled them already (hearCommitted): when nobody waits for its first request, it is not decoded.
   */
  heard(payload: string): void {
    const first = FIRST_ID.exec(payload)?.[1];
    if (first !== undefined && !this.waiting.has(first)) return;
    let pairs: Pair[];
    try {
      pairs = JSON.parse(payload) as Pair[];
    } catch {
      return;
    }
    for (const [id, outcome] of pairs) this.settle(id, outcome);
  }

  /** Outcomes this process committed itself, in the order of their requests. */
  committed(requestIds: readonly string[], outcomes: readonly TradeOutcome[]): void {
    requestIds.forEach((id, i) => this.settle(id, outcomes[i]));
  }

  private settle(id: string, outcome: TradeOutcome | null): void {
    const w = this.waiting.get(id);
    if (!w) return; // another process's request, or one given up on
    this.waiting.delete(id);
    w(outcome);
  }

  private whenLive(): Promise<boolean> {
    return this.notices.isLive(TRADE_OUTCOMES_CHANNEL) ? Promise.resolve(true) : signalWithin(this.onLive, LIVE_WITHIN_MS);
  }

  /**
   * Registers the requests before their job is enqueued (so no notice can come first). `ended`
   * resolves with every outcome in order, or rejects when one cannot be heard; `dispose` forgets them.
   */
  async watch(requestIds: readonly string[]): Promise<{ ended: Promise<{ outcomes: TradeOutcome[] }>; dispose(): void }> {
    const live = await this.whenLive();
    const each = requestIds.map(
      (id) =>
        new Promise<TradeOutcome>((res, rej) => {
          if (!live) return rej(new Error('trade outcome notices are not heard now'));
          this.waiting.set(id, (o) => (o ? res(o) : rej(new Error('the outcome was not heard in a notice'))));
        }),
    );
    // Checked, and a mismatch logged, as the job result was (each an ok flag and a body): a notice is
    // our own JSON, but it crossed a wire. A mismatch rejects: the caller reads the journal.
    const ended = Promise.all(each).then((outcomes) => {
      const parsed = tradeOutcomes.safeParse({ outcomes });
      if (parsed.success) return parsed.data;
      logger.error({ requestIds, issues: parsed.error.issues }, 'trade outcome notice does not match its schema');
      throw new Error('trade outcome notice does not match its schema');
    });
    ended.catch(() => undefined); // a caller given up on it does not handle its rejection
    return { ended, dispose: () => requestIds.forEach((id) => this.waiting.delete(id)) };
  }
}

const ears = new WeakMap<Deps, OutcomeEar>();

/**
 * The outcomes of a batch this process just committed, heard at once by this process's own waiting
 * requests (the all-in-one layout, where the API and the lane worker share one process and deps).
 * The commit's notice reaches the LISTEN connection through another Postgres backend, one process
 * hop later (about 1 ms on a busy 2-core machine); the notice carries these same outcomes, a waiter
 * is settled once, and the notice that follows finds nobody (and is not decoded). Only after COMMIT
 * was acknowledged. A process without an ear (a worker alone) has nobody waiting: nothing to do.
 */
export function hearCommitted(deps: Deps, requestIds: readonly string[], outcomes: readonly TradeOutcome[]): void {
  ears.get(deps)?.committed(requestIds, outcomes);
}

/** This process's ear for trade outcome notices (one per deps). */
export function outcomeEar(deps: Deps): OutcomeEar {
  let e = ears.get(deps);
  if (!e) ears.set(deps, (e = new OutcomeEar(deps)));
  return e;
}
