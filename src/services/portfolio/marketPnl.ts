import type { Deps } from '../../deps';
import { marketPnl, rankByPnl, type MarketPnl } from '../../domain/pnl';
import { agentPositions, positionMetricValue, positionWorth } from './portfolio';
import { rows } from '../../db/queryRows';

export interface MarketPnlRow extends MarketPnl {
  marketId: string;
  metricName: string;
  targetDate: string;
}

/**
 * A participant's P&L per market (over every workspace, or in one): marked at the consensus and at
 * each metric's current total; open books first, then by |pnlConsensus|.
 */
export async function marketPnlOf(deps: Deps, agentId: string, workspaceId: string | null): Promise<MarketPnlRow[]> {
  const positions = await agentPositions(deps, agentId, workspaceId);
  const totals = new Map<string, number | null>();
  if (positions.length) {
    const ids = [...new Set(positions.map((p) => p.market.metricId))];
    for (const r of await rows<{ id: string; total: number | null }>(deps.ds, `SELECT id, total FROM metrics WHERE id = ANY($1::uuid[])`, [ids])) totals.set(r.id, r.total);
  }
  const pnl = positions.map((p) => ({
    marketId: p.market.id,
    metricName: p.market.metricName,
    targetDate: p.market.targetDate,
    ...marketPnl({
      netCost: p.netCost,
      mark: positionWorth(p).worth,
      metricValue: positionMetricValue(p, totals.get(p.market.metricId) ?? null),
      open: p.market.status === 'open' || p.market.status === 'closed',
    }),
  }));
  return rankByPnl(pnl);
}
