/**
 * Profit and loss of one position (nano-units): what it cost net, what it is worth at the book's
 * consensus (its payout once resolved or voided), and what it would pay at the metric's current
 * total (null when the metric has none).
 */
export interface PositionMarks {
  /** Credits paid in minus credits taken out, signed. */
  netCost: bigint;
  /** Worth at the consensus, or the payout once the book is done. */
  mark: bigint;
  /** Payout at the metric's current total, or null when it has none. */
  metricValue: bigint | null;
  /** The book still trades or waits for resolution (open or closed). */
  open: boolean;
}

export interface MarketPnl {
  open: boolean;
  /** Cash the position moved to the holder: -netCost. */
  netCash: bigint;
  markValueConsensus: bigint;
  metricPayoutValue: bigint | null;
  /** mark - netCost. */
  pnlConsensus: bigint;
  /** metricValue - netCost, or null without a metric value. */
  pnlMetric: bigint | null;
}

export function marketPnl(p: PositionMarks): MarketPnl {
  return {
    open: p.open,
    netCash: -p.netCost,
    markValueConsensus: p.mark,
    metricPayoutValue: p.metricValue,
    pnlConsensus: p.mark - p.netCost,
    pnlMetric: p.metricValue === null ? null : p.metricValue - p.netCost,
  };
}

const abs = (x: bigint) => (x < 0n ? -x : x);

/** Open books first, then by |pnlConsensus|, largest first; ties keep their order. Returns a new array. */
export function rankByPnl<T extends Pick<MarketPnl, 'open' | 'pnlConsensus'>>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => Number(b.open) - Number(a.open) || (abs(b.pnlConsensus) > abs(a.pnlConsensus) ? 1 : abs(b.pnlConsensus) < abs(a.pnlConsensus) ? -1 : 0));
}
