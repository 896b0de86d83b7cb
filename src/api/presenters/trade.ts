import { toCredits } from '../../domain/money';
import type { NanoString, TradeAnswer, TradeFigures, TradeQuote, TradeResult } from '../../services/trading';

/** Trades as the API shows them: the nano data of services/trading as credits (domain/money formats). */

export const credits = (n: NanoString | bigint): number => toCredits(BigInt(n));

/** A body stored before the `v: 2` data shape is already presented (credits): it goes out as it is. */
export const isPresented = (body: object): boolean => (body as { v?: unknown }).v !== 2;

function figures(f: TradeFigures) {
  return {
    marketId: f.marketId,
    direction: f.direction,
    shares: credits(f.shares),
    ...(f.kind === 'buy' ? { cost: credits(f.cash) } : { proceeds: credits(f.cash) }),
    redeemed: credits(f.redeemed),
    consensus: f.consensus,
    prevConsensus: f.prevConsensus,
    probability: f.probability,
  };
}

function guardAndFills(f: TradeFigures) {
  const out: Record<string, unknown> = {};
  if (f.limited !== undefined) out.limited = f.limited;
  for (const k of ['spent', 'unspent', 'sharesSold', 'sharesKept'] as const) if (f[k] !== undefined) out[k] = credits(f[k]);
  if (f.limitFills) out.limitFills = f.limitFills.map((x) => ({ orderId: x.orderId, shares: credits(x.shares), price: x.price, cost: credits(x.cost) }));
  return out;
}

function presentTradeResult(r: TradeResult, idempotentReplay: boolean) {
  return {
    tradeId: r.tradeId,
    kind: r.kind,
    ...figures(r),
    balance: credits(r.balance),
    position: { direction: r.position.direction, shares: credits(r.position.shares) },
    ...guardAndFills(r),
    idempotentReplay,
  };
}

/**
 * An applied trade: the same for the first answer and an idempotent replay (stored data, or a body
 * stored before it). The flag goes inside the one literal: `{ ...body, flag }` would cost V8 a new
 * hidden class in old space on every answer (see applyTrade's tradeRow).
 */
export function presentTradeOutcome(o: TradeAnswer & { ok: true }) {
  if (!isPresented(o.body)) return presentTradeResult(o.body, o.replay === true);
  return { ...(o.body as unknown as Record<string, unknown>), idempotentReplay: o.replay === true };
}

/** A dry run (no kind: the quote says what a trade would do). */
export function presentTradeQuote(q: TradeQuote) {
  return {
    dryRun: true as const,
    ...figures(q),
    balance: credits(q.balance),
    affordable: q.affordable,
    shortfall: credits(q.shortfall),
    basis: { tradeCount: q.basis.tradeCount, liquidity: credits(q.basis.liquidity), consensus: q.basis.consensus },
    ...guardAndFills(q),
  };
}
