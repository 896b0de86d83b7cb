import type { EntityManager } from 'typeorm';
import { DomainError } from '../../errors';
import { fundLockedBook, lockMarket, type UnfundedBook } from '../books';
import { loadSpawnMetrics, plannedLiquidity } from './spawnBooks';

export interface OwnerFunding {
  /** Books funded now, with what each cost the owner (nano). */
  funded: Array<{ marketId: string; metricId: string; targetDate: string; subsidy: bigint }>;
  /** Books that stay unfunded, and why. */
  unfunded: UnfundedBook[];
}

/**
 * The owner funds the unfunded open baseline books of a workspace (or of one metric) that it can
 * pay for, nearest date first, each at the subsidy the metric plans for it today (horizonCredits,
 * liquidityCredits, the workspace default). A book it cannot pay stays unfunded and is reported
 * with what it needs. Run by an explicit act only (the refresh endpoint), never by the scheduled
 * pass (the owner's credits do not move behind its back) nor by PUT /metrics (spec §2.2:
 * liquidityCredits never touches an open market; the next refresh funds at the new subsidy).
 */
export async function fundOwnerBooks(m: EntityManager, scope: { workspaceId?: string; metricId?: string }, now: Date): Promise<OwnerFunding> {
  const rows: Array<{ id: string; metric_id: string; horizon_entry: string | null }> = await m.query(
    `SELECT id, metric_id, horizon_entry FROM markets
      WHERE ($1::uuid IS NULL OR workspace_id = $1::uuid) AND ($2::uuid IS NULL OR metric_id = $2::uuid)
        AND proposal_id IS NULL AND status = 'open' AND close_reason IS NULL AND NOT funded
      ORDER BY period_end NULLS LAST, id`,
    [scope.workspaceId ?? null, scope.metricId ?? null],
  );
  const out: OwnerFunding = { funded: [], unfunded: [] };
  if (!rows.length) return out;
  const metrics = new Map((await loadSpawnMetrics(m, [...new Set(rows.map((r) => r.metric_id))])).map((mt) => [mt.id, mt]));
  for (const r of rows) {
    const metric = metrics.get(r.metric_id)!;
    const needed = plannedLiquidity(metric, r.horizon_entry);
    const mk = await lockMarket(m, r.id);
    if (!mk || mk.funded || mk.status !== 'open' || mk.closeReason !== null) continue;
    const unfunded = (reason: UnfundedBook['reason']): UnfundedBook => ({ marketId: mk.id, metricId: mk.metricId, targetDate: mk.targetDate, branch: null, reason, needed, funderId: metric.ownerId });
    if (needed <= 0n) {
      out.unfunded.push(unfunded('no_liquidity'));
      continue;
    }
    try {
      await fundLockedBook(m, mk, metric.ownerId, needed, now);
      out.funded.push({ marketId: mk.id, metricId: mk.metricId, targetDate: mk.targetDate, subsidy: needed });
    } catch (err) {
      // A refused ledger write changes nothing: the book stays as it was and the pass goes on.
      if (!(err instanceof DomainError) || (err.code !== 'insufficient_balance' && err.code !== 'validation_failed')) throw err;
      out.unfunded.push(unfunded(err.code === 'insufficient_balance' ? 'insufficient_balance' : 'no_liquidity'));
    }
  }
  return out;
}
