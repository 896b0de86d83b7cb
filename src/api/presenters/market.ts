import { payoutFraction } from '../../domain/lmsr';
import { toCredits } from '../../domain/money';
import { displayStatus, marketConsensus, marketProbability, type MarketRow } from '../../services/books';

/** Condensed fields of spec §2.4 plus the catalog additions; every field listed explicitly. */
export function presentMarket(mk: MarketRow, now: Date) {
  const probability = marketProbability(mk);
  return {
    id: mk.id,
    metricId: mk.metricId,
    metricName: mk.metricName,
    proposalId: mk.proposalId,
    branch: mk.branch,
    targetDate: mk.targetDate,
    resolvesOn: mk.resolvesOn,
    title: mk.title,
    prediction: marketConsensus(mk),
    consensus: marketConsensus(mk),
    probability,
    rangeMin: mk.rangeMin,
    rangeMax: mk.rangeMax,
    liquidity: toCredits(mk.liquidity),
    liquidityParameter: toCredits(mk.b),
    funded: mk.funded,
    shares: { higher: toCredits(mk.qHigher - mk.q0Higher), lower: toCredits(mk.qLower - mk.q0Lower) },
    tradeCount: mk.tradeCount,
    volume: toCredits(mk.volume),
    status: displayStatus(mk, now),
    resolved: mk.status === 'resolved',
    resolvedValue: mk.resolvedValue,
    resolvedAt: mk.resolvedAt?.toISOString() ?? null,
    settledEarly: mk.settledEarly,
    settleReason: mk.settleReason,
    payoutPerShare: payoutPerShare(mk),
    voidReason: mk.voidReason,
    manual: mk.manual,
    tradingEndsAt: mk.tradingEndsAt?.toISOString() ?? null,
    createdAt: mk.createdAt.toISOString(),
  };
}

/**
 * What one share paid at resolution, in credits (resolveLockedMarket: higher pays v, lower 1 - v, v
 * the resolved value's place in the range); a voided book refunded instead, so null as before it ends.
 */
function payoutPerShare(mk: MarketRow): { higher: number; lower: number } | null {
  if (mk.status !== 'resolved' || mk.resolvedValue === null) return null;
  const v = payoutFraction(mk.resolvedValue, mk.rangeMin, mk.rangeMax);
  return { higher: v, lower: 1 - v };
}

/** The status summary's per-market shape (spec §2.4). */
export function presentMarketSummary(mk: MarketRow) {
  return {
    id: mk.id,
    targetDate: mk.targetDate,
    resolvesOn: mk.resolvesOn,
    prediction: marketConsensus(mk),
    probability: marketProbability(mk),
    rangeMin: mk.rangeMin,
    rangeMax: mk.rangeMax,
  };
}

/** POST /predictions/markets/{id}/void. */
export function presentVoid(r: { market: MarketRow; refunded: bigint }, now: Date) {
  return { market: presentMarket(r.market, now), refunded: toCredits(r.refunded) };
}
