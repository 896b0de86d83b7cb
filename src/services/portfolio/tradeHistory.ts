import type { Deps } from '../../deps';
import { rows } from '../../db/queryRows';

export interface TradeHistoryRow {
  id: string;
  marketId: string;
  metricName: string;
  targetDate: string;
  proposalId: string | null;
  branch: string | null;
  direction: string;
  kind: string;
  shares: bigint;
  /** Signed: what the trade cost (negative for a sale or a redemption). */
  cost: bigint;
  marketStatus: string;
  createdAt: Date;
}

/** A participant's trades, newest first, over every workspace (workspaceId null) or in one. */
export async function tradeHistoryOf(deps: Deps, agentId: string, workspaceId: string | null, limit: number): Promise<TradeHistoryRow[]> {
  const trades = await rows<{
    id: string;
    market_id: string;
    kind: string;
    direction: string;
    shares: string;
    cost: string;
    created_at: Date;
    metric_name: string;
    target_date: string;
    status: string;
    proposal_id: string | null;
    branch: string | null;
  }>(
    deps.ds,
    `SELECT t.id, t.market_id, t.kind, t.direction, t.shares, t.cost, t.created_at, mt.name AS metric_name, mk.target_date, mk.status,
            mk.proposal_id, mk.branch
       FROM trades t JOIN markets mk ON mk.id = t.market_id JOIN metrics mt ON mt.id = mk.metric_id
      WHERE t.agent_id = $1 AND ($2::uuid IS NULL OR t.workspace_id = $2::uuid)
      ORDER BY t.seq DESC LIMIT $3`,
    [agentId, workspaceId, limit],
  );
  return trades.map((r) => ({
    id: r.id,
    marketId: r.market_id,
    metricName: r.metric_name,
    targetDate: r.target_date,
    proposalId: r.proposal_id,
    branch: r.branch,
    direction: r.direction,
    kind: r.kind,
    shares: BigInt(r.shares),
    cost: BigInt(r.cost),
    marketStatus: r.status,
    createdAt: r.created_at,
  }));
}
