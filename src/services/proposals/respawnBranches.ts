/** Respawn: the branch pairs a pending proposal is missing at a new date, opened by the horizon pass. */
import type { EntityManager } from 'typeorm';
import type { MarketRow } from '../books';
import { emitEvent } from '../events';
import { leafMetrics, openPairsOrSkip, pairInputs, planPairs, type SkippedContributor } from './branchPairs';
import { lockProposal } from './proposalRows';

/**
 * Open the branch pairs a pending proposal is missing at `now` (a new primary month, a rolled
 * subsidised date, a new leaf metric), each paid again by its contributor; a contributor who cannot
 * pay is skipped and reported with proposal:subsidy_skipped. Idempotent through the live-book key.
 * The horizon pass (lifecycle) calls it per pending proposal.
 */
export async function respawnProposalBranches(m: EntityManager, proposalId: string, now: Date): Promise<{ opened: MarketRow[]; skipped: SkippedContributor[] }> {
  const p = await lockProposal(m, proposalId);
  if (!p) return { opened: [], skipped: [] };
  if (p.status !== 'pending' || (p.deadline && p.deadline.getTime() <= now.getTime()) || !p.proposedBy) return { opened: [], skipped: [] };
  const live: Array<{ metric_id: string; target_date: string }> = await m.query(
    `SELECT DISTINCT metric_id, target_date FROM markets WHERE proposal_id = $1 AND status IN ('open','closed')`,
    [p.id],
  );
  const have = new Set(live.map((r) => `${r.metric_id}|${r.target_date}`));
  const plans = planPairs(now, await leafMetrics(m, p.workspaceId, p.metricIds), p.liquidity).filter((x) => !have.has(`${x.metric.id}|${x.period.targetDate}`));
  const { opened, skipped } = await openPairsOrSkip(m, await pairInputs(m, p, plans));
  if (skipped.length) await emitEvent(m, p.workspaceId, 'proposal:subsidy_skipped', { proposalId: p.id, skipped });
  return { opened, skipped };
}
