/** A proposal as read: the row with every branch book and its scorecard, and the impact maths over those books. */
import type { DataSource, EntityManager } from 'typeorm';
import { headlineImpact, proposalImpact as impactOf, type BranchImpact as DomainBranchImpact, type ImpactBasis, type ImpactEntry as DomainImpactEntry } from '../../domain/proposalImpact';
import type { Proposal } from '../../entities/proposal';
import { marketConsensus, readMarkets, type MarketRow } from '../books';
import { scorecardOf, type ScorecardRow } from './scorecard';
import { findProposal, proposalNotFound } from './proposalRows';

export interface ProposalView {
  /** The row, with `proposer.nickname` loaded. */
  proposal: Proposal;
  /** Every branch book of the proposal, live or not. */
  markets: MarketRow[];
  scorecard: ScorecardRow[];
}

/** Every branch book of these proposals in one statement (the market row mapping lives with the markets area). */
async function branchBooks(m: DataSource | EntityManager, proposalIds: string[]): Promise<Map<string, MarketRow[]>> {
  const out = new Map<string, MarketRow[]>(proposalIds.map((id) => [id, []]));
  if (!proposalIds.length) return out;
  const books = await readMarkets(m, 'mk.proposal_id = ANY($1::uuid[])', [proposalIds], { order: 'mt.sort_order, mk.period_end NULLS LAST, mk.created_at, mk.branch' });
  for (const mk of books) if (mk.proposalId) out.get(mk.proposalId)?.push(mk);
  return out;
}

/** The views of these proposals, in their order: their books and scorecards in one statement each. */
export async function proposalViews(m: DataSource | EntityManager, proposals: Proposal[]): Promise<ProposalView[]> {
  const ids = proposals.map((p) => p.id);
  const books = await branchBooks(m, ids);
  const cards = await scorecardOf(m, ids);
  return proposals.map((p) => ({ proposal: p, markets: books.get(p.id) ?? [], scorecard: cards.get(p.id) ?? [] }));
}

export async function getProposal(m: DataSource | EntityManager, workspaceId: string, id: string): Promise<ProposalView> {
  const p = await findProposal(m, workspaceId, id);
  if (!p) throw proposalNotFound(id);
  return (await proposalViews(m, [p]))[0];
}

export type BranchImpact = DomainBranchImpact<MarketRow>;
export type ImpactEntry = DomainImpactEntry<MarketRow>;
export { headlineImpact };

/** The impact maths (domain/proposalImpact) over this service's books and their consensus. */
export function proposalImpact(p: ImpactBasis, markets: MarketRow[]): ImpactEntry[] {
  return impactOf(p, markets, marketConsensus);
}
