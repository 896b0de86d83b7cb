import type { EntityManager } from 'typeorm';
import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { logger } from '../../logger';
import { lockMarket, MARKET_SELECT, rowToMarket, type MarketRow } from './books';
import { decideResolution, type MetricFacts, type Reading } from '../../domain/resolution';
import { writeLedger, type Transfer } from '../ledger';
import { respawnProposalBranches } from '../proposals';
import { resolveLockedMarket, voidLockedMarket } from './resolveBook';
import { liveBaselineBooks, loadSpawnMetrics, planHorizons, spawnForMetrics } from './spawnBooks';

export interface RefreshSummary {
  metrics: number;
  opened: number;
  deactivated: number;
  voided: number;
  /** Conditional books opened for pending proposals. */
  proposalBranches: number;
}

/** One metric's horizon pass in the caller's transaction: retire stale dates, open missing ones. */
export async function refreshMetric(m: EntityManager, metricId: string, now: Date): Promise<{ opened: number; deactivated: number; voided: number }> {
  const r = await spawnForMetrics(m, [metricId], now);
  return { opened: r.opened.length, deactivated: r.deactivated, voided: r.voided };
}

const CHUNK = 250;

/**
 * The horizon pass: plan every metric in memory from two queries per chunk, then open or retire
 * only where something changes, one transaction per chunk that has work.
 */
export async function refreshHorizons(deps: Deps, scope: { workspaceId?: string; metricId?: string; minuteOnly?: boolean }): Promise<RefreshSummary> {
  const now = deps.clock.now();
  const rows: Array<{ id: string }> = await deps.ds.query(
    `SELECT id FROM metrics
      WHERE ($1::uuid IS NULL OR workspace_id = $1::uuid) AND ($2::uuid IS NULL OR id = $2::uuid)
        AND time_preference IS NOT NULL AND (time_preference->>'enabled')::boolean
        AND (NOT $3::boolean OR time_preference::text ~ '\\+[0-9]+min')
      ORDER BY id`,
    [scope.workspaceId ?? null, scope.metricId ?? null, scope.minuteOnly ?? false],
  );
  const summary: RefreshSummary = { metrics: rows.length, opened: 0, deactivated: 0, voided: 0, proposalBranches: 0 };
  const chunks: string[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) chunks.push(rows.slice(i, i + CHUNK).map((r) => r.id));
  let next = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < chunks.length) {
        const ids = chunks[next++];
        const metrics = await loadSpawnMetrics(deps.ds.manager, ids);
        const live = await liveBaselineBooks(deps.ds.manager, ids);
        const busy = metrics.filter((mt) => {
          const plan = planHorizons(mt, live.filter((b) => b.metricId === mt.id), now);
          return plan.open.length > 0 || plan.stale.length > 0;
        });
        if (!busy.length) continue;
        // Re-planned inside the transaction: a concurrent pass may have opened some already.
        const r = await inTransaction(deps.ds, (m) => spawnForMetrics(m, busy.map((mt) => mt.id), now));
        summary.opened += r.opened.length;
        summary.deactivated += r.deactivated;
        summary.voided += r.voided;
      }
    }),
  );
  // Pending proposals follow their metrics' dates: missing branch pairs open, paid again by their contributors.
  if (!scope.minuteOnly) {
    const pending: Array<{ id: string }> = await deps.ds.query(
      `SELECT id FROM proposals WHERE status = 'pending' AND ($1::uuid IS NULL OR workspace_id = $1::uuid) AND (deadline IS NULL OR deadline > $2) ORDER BY id`,
      [scope.workspaceId ?? null, now],
    );
    for (const p of pending) {
      const r = await inTransaction(deps.ds, (m) => respawnProposalBranches(m, p.id, now));
      summary.proposalBranches += r.opened.length;
    }
  }
  return summary;
}

export type ResolveOutcome = { marketId: string; outcome: 'resolved' | 'voided' | 'waiting' | 'skipped' | 'untouched'; value?: number; reason?: string; payout?: bigint };

/**
 * Resolve a batch of due books (one lane's) in one transaction: the books are locked together,
 * their metrics and last in-period readings read in two queries, and each book applied under a
 * savepoint so one bad book cannot undo the others.
 */
export async function resolveDueBatch(m: EntityManager, marketIds: string[], now: Date): Promise<ResolveOutcome[]> {
  const books: MarketRow[] = (await m.query(`${MARKET_SELECT} WHERE mk.id = ANY($1::uuid[]) ORDER BY mk.id FOR UPDATE OF mk`, [marketIds])).map(rowToMarket);
  const due = books.filter((mk) => (mk.status === 'open' || mk.status === 'closed') && mk.periodEnd && mk.periodStart && mk.periodEnd <= now);
  const out: ResolveOutcome[] = marketIds.filter((id) => !due.some((mk) => mk.id === id)).map((id) => ({ marketId: id, outcome: 'untouched' }));
  if (!due.length) return out;
  const facts = new Map<string, MetricFacts>();
  for (const r of await m.query(
    `SELECT id, resolves_na_until_measured, settlement_lag_minutes, measured_at FROM metrics WHERE id = ANY($1::uuid[])`,
    [[...new Set(due.map((mk) => mk.metricId))]],
  )) {
    facts.set(r.id, { resolvesNaUntilMeasured: r.resolves_na_until_measured, settlementLagMinutes: r.settlement_lag_minutes, measuredAt: r.measured_at });
  }
  const readings = new Map<string, Reading>();
  for (const r of await m.query(
    `SELECT x.id, rd.value, rd.na FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::timestamptz[]) AS x(id, metric, ps, pe)
       CROSS JOIN LATERAL (SELECT value, na FROM metric_readings WHERE metric_id = x.metric AND as_of >= x.ps AND as_of < x.pe
                            ORDER BY as_of DESC, id DESC LIMIT 1) rd`,
    [due.map((mk) => mk.id), due.map((mk) => mk.metricId), due.map((mk) => mk.periodStart), due.map((mk) => mk.periodEnd)],
  )) {
    readings.set(r.id, { value: r.value, na: r.na });
  }
  // Every book's ledger legs, applied in one statement at the end: hot accounts locked once, in id order.
  const ledger: Transfer[] = [];
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
  await writeLedger(m, ledger, { shortfall: 'internal' });
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

export async function dueMarketIds(deps: Deps, workspaceId: string | null, now: Date): Promise<string[]> {
  const rows = await deps.ds.query(
    `SELECT id FROM markets WHERE status IN ('open','closed') AND period_end <= $1 AND ($2::uuid IS NULL OR workspace_id = $2::uuid) ORDER BY period_end, id`,
    [now, workspaceId],
  );
  return rows.map((r: { id: string }) => r.id);
}

export async function liveMarketIdsOfMetric(m: EntityManager, metricId: string): Promise<string[]> {
  const rows = await m.query(`SELECT id FROM markets WHERE metric_id = $1 AND status IN ('open','closed') ORDER BY id`, [metricId]);
  return rows.map((r: { id: string }) => r.id);
}
