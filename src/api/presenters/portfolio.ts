import { consensusOf, liquidationValue } from '../../domain/lmsr';
import { toCredits } from '../../domain/money';
import { displayStatus, type MarketRow } from '../../services/books';
import { positionWorth, type MarketPnlRow, type PositionView, type TradeHistoryRow } from '../../services/portfolio';
import { presentMarketSummary } from './market';

/** A participant's portfolio as the API shows it: nano-units as credits. */

export function presentPosition(p: PositionView, now: Date) {
  const { worth, markProbability } = positionWorth(p);
  // What a sale of it all would return now: the figure a holder can act on (issue 65).
  const sellValue = p.payout !== null ? p.payout : markProbability === null ? 0n : liquidationValue(p.market, p.sharesHigher, p.sharesLower);
  const direction = p.sharesHigher > 0n ? 'higher' : p.sharesLower > 0n ? 'lower' : null;
  const mk = p.market;
  return {
    workspaceId: mk.workspaceId,
    marketId: mk.id,
    proposalId: mk.proposalId,
    branch: mk.branch,
    metricName: mk.metricName,
    targetDate: mk.targetDate,
    direction,
    shares: toCredits(p.sharesHigher > 0n ? p.sharesHigher : p.sharesLower),
    totalCost: toCredits(p.netCost),
    worth: toCredits(worth),
    profit: toCredits(worth - p.netCost),
    sellValue: toCredits(sellValue),
    sellProfit: toCredits(sellValue - p.netCost),
    status: displayStatus(mk, now),
    probabilityHigher: markProbability,
    consensus: markProbability === null ? null : consensusOf(markProbability, mk.rangeMin, mk.rangeMax),
    actualValue: mk.resolvedValue,
  };
}

export function presentTradeRow(t: TradeHistoryRow) {
  return { ...t, shares: toCredits(t.shares), cost: toCredits(t.cost), createdAt: t.createdAt.toISOString() };
}

const orNull = (n: bigint | null) => (n === null ? null : toCredits(n));

export function presentMarketPnl(r: MarketPnlRow) {
  return {
    marketId: r.marketId,
    metricName: r.metricName,
    targetDate: r.targetDate,
    open: r.open,
    netCash: toCredits(r.netCash),
    markValueConsensus: toCredits(r.markValueConsensus),
    metricPayoutValue: orNull(r.metricPayoutValue),
    pnlConsensus: toCredits(r.pnlConsensus),
    pnlMetric: orNull(r.pnlMetric),
  };
}

export function presentDashboard(balance: bigint, markets: readonly MarketRow[]) {
  return {
    balance: toCredits(balance),
    markets: markets.map((mk) => ({ ...presentMarketSummary(mk), metricName: mk.metricName, liquidity: toCredits(mk.liquidity), tradeCount: mk.tradeCount })),
  };
}
