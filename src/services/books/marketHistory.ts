import type { Deps } from '../../deps';
import { rows } from '../../db/queryRows';

export interface HistoryPoint {
  tradeId: string;
  kind: string;
  direction: string;
  consensus: number;
  probability: number;
  at: Date;
}

/** Consensus and probability after each trade of a book (redemptions left out), oldest first. */
export async function marketHistory(deps: Deps, marketId: string, limit: number): Promise<HistoryPoint[]> {
  const trades = await rows<{ id: string; kind: string; direction: string; consensus_after: number; probability_after: number; created_at: Date }>(
    deps.ds,
    `SELECT id, kind, direction, consensus_after, probability_after, created_at FROM trades WHERE market_id = $1 AND kind <> 'redeem' ORDER BY seq LIMIT $2`,
    [marketId, limit],
  );
  return trades.map((r) => ({
    tradeId: r.id,
    kind: r.kind,
    direction: r.direction,
    consensus: r.consensus_after,
    probability: r.probability_after,
    at: r.created_at,
  }));
}
