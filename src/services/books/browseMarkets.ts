import type { Deps } from '../../deps';
import { findMarket, listMarkets, MARKET_SELECT, rowToMarket, type MarketFilter, type MarketRaw, type MarketRow } from './books';
import { firstRow } from '../../db/queryRows';

/** The books of a workspace, for listings (open and closed unless the filter says otherwise). */
export async function marketsOfWorkspace(deps: Deps, workspaceId: string, filter: MarketFilter): Promise<MarketRow[]> {
  return listMarkets(deps.ds, workspaceId, filter);
}

/** One book of the workspace by id; null when it is not there. */
export async function marketInWorkspace(deps: Deps, workspaceId: string, marketId: string): Promise<MarketRow | null> {
  return findMarket(deps.ds, workspaceId, marketId);
}

export interface MarketByDateQuery {
  workspaceId: string;
  targetDate: string;
  metricId: string | null;
  metricName: string | null;
  proposalId: string | null;
  /** Required with proposalId, null without. */
  branch: string | null;
}

/**
 * The book of a metric (by id or name) for one target date, on the baseline or on one proposal
 * branch: a live one first, else the newest; null when none exists.
 */
export async function marketByTargetDate(deps: Deps, q: MarketByDateQuery): Promise<MarketRow | null> {
  const row = await firstRow<MarketRaw>(
    deps.ds,
    `${MARKET_SELECT} WHERE mk.workspace_id = $1 AND mk.target_date = $2
        AND ($3::text IS NULL OR mk.metric_id::text = $3) AND ($4::text IS NULL OR lower(mt.name) = lower($4))
        AND mk.proposal_id IS NOT DISTINCT FROM $5::uuid AND mk.branch IS NOT DISTINCT FROM $6::text
      ORDER BY (mk.status IN ('open','closed')) DESC, mk.created_at DESC LIMIT 1`,
    [q.workspaceId, q.targetDate, q.metricId, q.metricName, q.proposalId, q.branch],
  );
  return row ? rowToMarket(row) : null;
}

/** The open books of a workspace by liquidity, then by trade count, most first (the dashboard). */
export async function mostLiquidMarkets(deps: Deps, workspaceId: string, limit: number): Promise<MarketRow[]> {
  const markets = await listMarkets(deps.ds, workspaceId, { limit: 1000, statuses: ['open'] });
  markets.sort((a, b) => (b.liquidity > a.liquidity ? 1 : b.liquidity < a.liquidity ? -1 : b.tradeCount - a.tradeCount));
  return markets.slice(0, limit);
}
