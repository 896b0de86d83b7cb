import { toCredits } from '../../domain/money';
import { displayStatus, marketProbability } from '../../services/books';
import { headlineImpact, proposalImpact, type BranchImpact, type ImpactEntry, type ProposalView } from '../../services/proposals';
import type { CommentRow, ScorecardRow, ScorecardStats, WorkspaceScorecard } from '../../services/proposals';
import { presentMarket } from './market';

function presentBranch(b: BranchImpact | null, now: Date) {
  if (!b) return null;
  return {
    marketId: b.market.id,
    status: displayStatus(b.market, now),
    consensus: b.consensus,
    probability: marketProbability(b.market),
    liquidity: toCredits(b.market.liquidity),
    tradeCount: b.market.tradeCount,
  };
}

function presentImpact(e: ImpactEntry, now: Date) {
  return {
    metricId: e.metricId,
    metricName: e.metricName,
    targetDate: e.targetDate,
    resolvesOn: e.resolvesOn,
    expected: e.expected,
    approved: presentBranch(e.approved, now),
    declined: presentBranch(e.declined, now),
    impact: e.impact,
  };
}

export function presentScorecardRow(s: ScorecardRow) {
  const width = s.rangeMax - s.rangeMin;
  return {
    proposalId: s.proposalId,
    proposalTitle: s.proposalTitle,
    marketId: s.marketId,
    metricId: s.metricId,
    metricName: s.metricName,
    targetDate: s.targetDate,
    branch: s.branch,
    decision: s.decision,
    taken: s.taken,
    realisedValue: s.realisedValue,
    rangeMin: s.rangeMin,
    rangeMax: s.rangeMax,
    approvedConsensus: s.approvedConsensus,
    declinedConsensus: s.declinedConsensus,
    predicted: s.predicted,
    error: s.error,
    absoluteError: s.error === null ? null : Math.abs(s.error),
    relativeError: s.error === null || width <= 0 ? null : Math.abs(s.error) / width,
    withinRange: s.withinRange,
    closerThanOther: s.closerThanOther,
    resolvedAt: s.resolvedAt.toISOString(),
  };
}

/**
 * Proposal JSON (spec §2.6 plus the catalog fields seen in events): every field listed explicitly.
 * `readable` hides the books and impact of metrics the caller may not read (spec §2.10).
 */
export function presentProposal(v: ProposalView, now: Date, readable: (metricId: string) => boolean = () => true) {
  const p = v.proposal;
  const markets = v.markets.filter((mk) => readable(mk.metricId));
  const impact = proposalImpact(p, markets);
  const deadlinePassed = !!p.deadline && p.deadline.getTime() <= now.getTime();
  return {
    id: p.id,
    workspaceId: p.workspaceId,
    title: p.title,
    description: p.description,
    status: p.status,
    spam: p.spam,
    proposedBy: p.proposedBy,
    proposedByNickname: p.proposer?.nickname ?? null,
    createdAt: p.createdAt.toISOString(),
    deadline: p.deadline?.toISOString() ?? null,
    deadlinePassed,
    closed: p.status !== 'pending' || deadlinePassed,
    decidedBy: p.decidedBy,
    decidedAt: p.decidedAt?.toISOString() ?? null,
    liquiditySubsidy: toCredits(p.liquidity),
    conditionalMarketCount: markets.length,
    metricIds: p.metricIds.filter((id) => readable(id)),
    headline: p.headlineMetricId && readable(p.headlineMetricId) ? { metricId: p.headlineMetricId, targetDate: p.headlineTargetDate } : null,
    headlineImpact: readable(p.headlineMetricId ?? '') ? headlineImpact(p, impact) : null,
    impact: impact.map((e) => presentImpact(e, now)),
    conditionalMarkets: markets.map((mk) => presentMarket(mk, now)),
    scorecard: v.scorecard.filter((s) => readable(s.metricId)).map(presentScorecardRow),
  };
}

export function presentComment(c: CommentRow) {
  return {
    id: c.id,
    proposalId: c.proposalId,
    authorId: c.authorId,
    authorNickname: c.author?.nickname ?? null,
    parentId: c.parentId,
    body: c.body,
    createdAt: c.createdAt.toISOString(),
  };
}

function presentStats(s: ScorecardStats) {
  return {
    resolved: s.resolved,
    predicted: s.predicted,
    withinRange: s.withinRange,
    withinRangeRate: s.withinRangeRate,
    meanAbsoluteError: s.meanAbsoluteError,
    meanRelativeError: s.meanRelativeError,
    closerThanOther: s.closerThanOther,
    closerThanOtherRate: s.closerThanOtherRate,
  };
}

export function presentWorkspaceScorecard(workspaceId: string, s: WorkspaceScorecard) {
  return {
    workspaceId,
    tolerance: s.tolerance,
    summary: presentStats(s.summary),
    byDecision: { approved: presentStats(s.byDecision.approved), declined: presentStats(s.byDecision.declined) },
    undecided: s.undecided,
    total: s.total,
    entries: s.entries.map(presentScorecardRow),
  };
}
