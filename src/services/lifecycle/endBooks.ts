import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { logger } from '../../logger';
import { decideResolution, type MetricFacts, type Reading } from '../../domain/resolution';
import { withOneLedgerWrite } from '../ledger';
import { lockMarket, lockMarketsById, type MarketRow } from '../books';
import { resolveLockedMarket, voidLockedMarket } from './resolveBook';
import { rows } from '../../db/queryRows';

/** The lane jobs that end books: due books resolved in batches, one book settled early. */

export type ResolveOutcome = { marketId: string; outcome: 'resolved' | 'voided' | 'waiting' | 'skipped' | 'untouched'; value?: number; reason?: string; payout?: bigint };

/**
 * Resolve a batch of due books (one lane's) in one transaction: the books are locked together,
 * their metrics and last in-period readings read in two queries, and each book applied under a
 * savepoint so one bad book cannot undo the others.
 */
export async function resolveDueBatch(m: EntityManager, marketIds: string[], now: Date): Promise<ResolveOutcome[]> {
  const books: MarketRow[] = await lockMarketsById(m, marketIds);
  const due = books.filter((mk) => (mk.status === 'open' || mk.status === 'closed') && mk.periodEnd && mk.periodStart && mk.periodEnd <= now);
  const out: ResolveOutcome[] = marketIds.filter((id) => !due.some((mk) => mk.id === id)).map((id) => ({ marketId: id, outcome: 'untouched' }));
  if (!due.length) return out;
  const facts = new Map<string, MetricFacts>();
  for (const r of await rows<{ id: string; resolves_na_until_measured: boolean; settlement_lag_minutes: number | null; measured_at: Date | null }>(
    m,
    `SELECT id, resolves_na_until_measured, settlement_lag_minutes, measured_at FROM metrics WHERE id = ANY($1::uuid[])`,
    [[...new Set(due.map((mk) => mk.metricId))]],
  )) {
    facts.set(r.id, { resolvesNaUntilMeasured: r.resolves_na_until_measured, settlementLagMinutes: r.settlement_lag_minutes, measuredAt: r.measured_at });
  }
  const readings = new Map<string, Reading>();
  for (const r of await rows<{ id: string; value: number | null; na: boolean }>(
    m,
    `SELECT x.id, rd.value, rd.na FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::timestamptz[]) AS x(id, metric, ps, pe)
       CROSS JOIN LATERAL (SELECT value, na FROM metric_readings WHERE metric_id = x.metric AND as_of >= x.ps AND as_of < x.pe
                            ORDER BY as_of DESC, id DESC LIMIT 1) rd`,
    [due.map((mk) => mk.id), due.map((mk) => mk.metricId), due.map((mk) => mk.periodStart), due.map((mk) => mk.periodEnd)],
  )) {
    readings.set(r.id, { value: r.value, na: r.na });
  }
  // Every book's ledger legs, applied in one statement at the end: hot accounts locked once, in id order.
  await withOneLedgerWrite(
    m,
    async (ledger) => {
      for (const mk of due) {
        const d = decideResolution(mk, facts.get(mk.metricId), readings.get(mk.id), now);
        if (d.action === 'wait') {
          out.push({ marketId: mk.id, outcome: 'waiting' });
          continue;
        }
        if (d.action !== 'resolve' && d.action !== 'void') {
          logger.error({ marketId: mk.id, value: readings.get(mk.id)?.value }, 'negative reading: resolution skipped');
          out.push({ marketId: mk.id, outcome: 'skipped', reason: 'negative_value' });
          continue;
        }
        await m.query('SAVEPOINT resolve_book');
        const mark = ledger.length;
        try {
          if (d.action === 'void') {
            await voidLockedMarket(m, mk, d.reason, now, ledger);
            out.push({ marketId: mk.id, outcome: 'voided', reason: d.code });
          } else {
            const { totalPayout } = await resolveLockedMarket(m, mk, d.value, now, {}, ledger);
            out.push({ marketId: mk.id, outcome: 'resolved', value: d.value, payout: totalPayout });
          }
          await m.query('RELEASE SAVEPOINT resolve_book');
        } catch (err) {
          await m.query('ROLLBACK TO SAVEPOINT resolve_book');
          ledger.length = mark; // the book's legs go with its savepoint
          logger.error({ marketId: mk.id, err }, 'resolution failed; the book stays open');
          out.push({ marketId: mk.id, outcome: 'skipped', reason: 'error' });
        }
      }
    },
    { shortfall: 'internal' },
  );
  return out;
}

/** Early settlement of one book at a supplied value (clamped to its range). */
export async function settleBook(m: EntityManager, marketId: string, value: number, reason: string, now: Date): Promise<{ marketId: string; settled: boolean; payout: bigint }> {
  const mk = await lockMarket(m, marketId);
  if (!mk || (mk.status !== 'open' && mk.status !== 'closed')) return { marketId, settled: false, payout: 0n };
  const clamped = Math.min(Math.max(value, mk.rangeMin), mk.rangeMax);
  const { totalPayout } = await resolveLockedMarket(m, mk, clamped, now, { settledEarly: true, reason });
  return { marketId, settled: true, payout: totalPayout };
}

/** Per hub: books resolved and committed whose standings job is not enqueued yet, and the enqueue in flight. */
const standingsQueue = new WeakMap<Deps['hub'], { ids: string[]; flushing: Promise<void> | null }>();
const STANDINGS_JOB_BOOKS = 500;

/**
 * After a resolving transaction committed: the `standings` job for the books it resolved (inside it
 * their standings were only marked pending). Coalesced per process: while one enqueue is in flight,
 * books resolved meanwhile wait and go together in the next job (up to 500), so a busy pass pays one
 * enqueue for many books. Never awaited by the lane: an enqueue that fails or hangs (Redis away)
 * leaves the books pending, and the minute sweep adds them. Returns the flush, for a caller (the
 * benchmark) that wants to know when the jobs are on the queue.
 */
export function enqueueStandings(deps: Deps, resolved: string[]): Promise<void> {
  let q = standingsQueue.get(deps.hub);
  if (!q) standingsQueue.set(deps.hub, (q = { ids: [], flushing: null }));
  const state = q;
  state.ids.push(...resolved);
  if (!state.flushing && state.ids.length) {
    state.flushing = (async () => {
      while (state.ids.length) {
        const ids = state.ids.splice(0, STANDINGS_JOB_BOOKS);
        await deps.hub
          .enqueue('standings', 'record', { marketIds: ids }, { jobId: `standings-${ids[0]}` })
          .catch((err: unknown) => logger.warn({ err, marketIds: ids }, 'standings job not enqueued; the sweep will add the books'));
      }
      state.flushing = null;
    })();
  }
  return state.flushing ?? Promise.resolve();
}

/** A lane's resolve job: its due books resolved (or voided, or left waiting) in one transaction. */
export async function resolveDueBooks(deps: Deps, marketIds: string[]): Promise<ResolveOutcome[]> {
  const now = deps.clock.now();
  const out = await inTransaction(deps.ds, (m) => resolveDueBatch(m, marketIds, now));
  void enqueueStandings(deps, out.filter((o) => o.outcome === 'resolved').map((o) => o.marketId));
  return out;
}

/** A lane's settle job: one book settled early at the value (clamped to its range), in one transaction. */
export async function settleBookNow(deps: Deps, marketId: string, value: number, reason: string): Promise<{ marketId: string; settled: boolean; payout: bigint }> {
  const out = await inTransaction(deps.ds, (m) => settleBook(m, marketId, value, reason, deps.clock.now()));
  if (out.settled) void enqueueStandings(deps, [marketId]);
  return out;
}
