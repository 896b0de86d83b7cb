import type { DataSource } from 'typeorm';
import type { Deps } from '../../deps';
import { holderPayout, payoutFraction, probability } from '../../domain/lmsr';
import { marketLateral, rowToMarket, type MarketRaw, type MarketRow } from '../books';
import { rows } from '../../db/queryRows';

export interface PositionView {
  market: MarketRow;
  sharesHigher: bigint;
  sharesLower: bigint;
  netCost: bigint;
  payout: bigint | null;
}

/**
 * A participant's positions, live books first, over every workspace (workspaceId null) or in one;
 * `liveOnly`: books still open (open or closed) only.
 */
export async function positionsOf(q: Pick<DataSource, 'query'>, agentId: string, workspaceId: string | null, opts: { liveOnly?: boolean } = {}): Promise<PositionView[]> {
  // The position's int8 columns as strings, beside the book's row (MARKET_SELECT's columns) for rowToMarket.
  const found = await rows<MarketRaw & { shares_higher: string; shares_lower: string; net_cost: string; payout: string | null }>(
    q,
    `SELECT p.shares_higher, p.shares_lower, p.net_cost, p.payout, sub.* FROM positions p
       ${marketLateral(`mk.id = p.market_id AND (NOT $3::boolean OR mk.status IN ('open','closed'))`)}
      WHERE p.agent_id = $1 AND ($2::uuid IS NULL OR p.workspace_id = $2::uuid)
      ORDER BY (sub.status IN ('open','closed')) DESC, sub.period_end NULLS LAST, sub.id`,
    [agentId, workspaceId, opts.liveOnly ?? false],
  );
  return found.map((r) => ({
    market: rowToMarket(r),
    sharesHigher: BigInt(r.shares_higher),
    sharesLower: BigInt(r.shares_lower),
    netCost: BigInt(r.net_cost),
    payout: r.payout === null ? null : BigInt(r.payout),
  }));
}

export async function agentPositions(deps: Deps, agentId: string, workspaceId: string | null): Promise<PositionView[]> {
  return positionsOf(deps.ds, agentId, workspaceId);
}

/**
 * Worth of a position: what it holds at the consensus (shares x probability of its side) while
 * live; its payout once resolved or voided.
 */
export function positionWorth(p: PositionView): { worth: bigint; markProbability: number | null } {
  if (p.payout !== null) return { worth: p.payout, markProbability: null };
  const mk = p.market;
  if (!mk.funded || mk.b <= 0n) return { worth: 0n, markProbability: null };
  const prob = probability({ qHigher: mk.qHigher, qLower: mk.qLower, b: mk.b });
  return { worth: holderPayout(p.sharesHigher, p.sharesLower, prob), markProbability: prob };
}

/** Value at the metric's current reading (pnlMetric), as if the market resolved now. */
export function positionMetricValue(p: PositionView, metricTotal: number | null): bigint | null {
  if (p.payout !== null) return p.payout;
  if (metricTotal === null) return null;
  return holderPayout(p.sharesHigher, p.sharesLower, payoutFraction(Math.max(0, metricTotal), p.market.rangeMin, p.market.rangeMax));
}
