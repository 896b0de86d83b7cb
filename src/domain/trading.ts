import { DomainError } from '../errors';
import {
  buyToProbability,
  buyWithSpend,
  consensusOf,
  probability,
  probabilityOf,
  redeemPairs,
  sellShares,
  sellToProbability,
  type BookState,
  type Direction,
} from './lmsr';
import { formatCredits, minBig, toNano } from './money';
import { walkBuy, type Fill, type Wall } from './orderBook';

/** Smallest spend or proceeds a trade may have: 0.000001 credits. */
export const MIN_TRADE_NANO = 1_000n;
const P_FLOOR = 1e-6;

export type TradeSpec =
  | { mode: 'buy'; direction: Direction; amount: bigint; limit?: number }
  | { mode: 'target'; direction?: Direction; targetValue: number; maxBudget: bigint; limit?: number }
  | { mode: 'sell'; direction: Direction; shares: bigint; limit?: number };

export interface Holding {
  higher: bigint;
  lower: bigint;
}

export interface TradePlan {
  kind: 'buy' | 'sell';
  direction: Direction;
  /** Shares bought or sold (nano). */
  shares: bigint;
  /** Credits paid (buy) or received (sell), nano. */
  cash: bigint;
  /** Matched higher+lower pairs redeemed at 1 credit each after a buy (nano shares = nano credits). */
  redeemed: bigint;
  book: BookState;
  holding: Holding;
  probabilityBefore: number;
  probabilityAfter: number;
  consensusBefore: number;
  consensusAfter: number;
  /** Price-guard and budget details, present when the mode or the limit calls for them. */
  limited?: boolean;
  spent?: bigint;
  unspent?: bigint;
  sharesSold?: bigint;
  sharesKept?: bigint;
  /** Resting orders this buy traded against (limitFills), in the order it met them. */
  fills: Fill[];
}

const clampP = (p: number) => Math.min(1 - P_FLOOR, Math.max(P_FLOOR, p));

/**
 * Price one trade against a locked book: pure, so a dry run and a real trade share every check.
 * Throws DomainError with the trading codes of spec §7.
 */
export function planTrade(input: {
  book: BookState;
  rangeMin: number;
  rangeMax: number;
  holding: Holding;
  spec: TradeSpec;
  sellOnly: boolean;
  /** Resting orders in reach (see orderBook); a buy trades against the opposing ones. */
  walls?: readonly Wall[];
  /** The taker: shares its own resting orders get from this trade count in its holding. */
  selfId?: string;
}): TradePlan {
  const { book, rangeMin, rangeMax, holding, spec } = input;
  const walls = input.walls ?? [];
  const p0 = probability(book);
  const c0 = consensusOf(p0, rangeMin, rangeMax);
  const limitP = spec.limit === undefined ? undefined : clampP(probabilityOf(spec.limit, rangeMin, rangeMax));
  const priceMoved = () =>
    new DomainError('price_moved', `The consensus is already at or past your limit (${c0} vs ${spec.limit ?? ('targetValue' in spec ? spec.targetValue : '')}).`, {
      consensus: c0,
      limit: spec.limit ?? ('targetValue' in spec ? spec.targetValue : null),
    });

  if (spec.mode !== 'sell' && input.sellOnly) {
    throw new DomainError('market_closed', 'This market is closed: it accepts only sells.');
  }

  if (spec.mode === 'sell') {
    const available = spec.direction === 'higher' ? holding.higher : holding.lower;
    if (spec.shares > available) {
      throw new DomainError('insufficient_shares', `You hold ${formatCredits(available)} ${spec.direction} shares and asked to sell ${formatCredits(spec.shares)}.`, {
        available,
      });
    }
    let shares = spec.shares;
    let limited: boolean | undefined;
    let r: { proceeds: bigint; book: BookState };
    // Shares bought at walls are outside the book, so a holder may sell more of a side than the
    // book holds. Lift both sides by the deficit first: C(q + k(1,1)) = C(q) + k, so prices and
    // proceeds are those of the same sale, and the pool's cover is unchanged (decisions.md).
    const side = spec.direction === 'higher' ? book.qHigher : book.qLower;
    const lift = spec.shares > side ? spec.shares - side : 0n;
    const lifted = lift > 0n ? { ...book, qHigher: book.qHigher + lift, qLower: book.qLower + lift } : book;
    if (limitP !== undefined) {
      // Selling higher pushes p down: the limit is the lowest call it may leave (and vice versa).
      const past = spec.direction === 'higher' ? p0 <= limitP : p0 >= limitP;
      if (past) throw priceMoved();
      const s = sellToProbability(lifted, spec.direction, limitP, spec.shares);
      shares = s.shares;
      limited = s.shares < spec.shares;
      r = { proceeds: s.proceeds, book: s.book };
    } else {
      r = sellShares(lifted, spec.direction, shares);
    }
    // Give back what the sale did not need of the lift (the book keeps its smallest form).
    const drop = minBig(lift, minBig(r.book.qHigher, r.book.qLower));
    if (drop > 0n) r = { ...r, book: redeemPairs(r.book, drop) };
    if (shares <= 0n || r.proceeds < MIN_TRADE_NANO) throw tooSmall();
    const pAfter = probability(r.book);
    const next: Holding = { ...holding, [spec.direction]: available - shares };
    return {
      kind: 'sell',
      direction: spec.direction,
      shares,
      cash: r.proceeds,
      redeemed: 0n,
      book: r.book,
      holding: next,
      probabilityBefore: p0,
      probabilityAfter: pAfter,
      consensusBefore: c0,
      consensusAfter: consensusOf(pAfter, rangeMin, rangeMax),
      ...(limitP !== undefined ? { limited, sharesSold: shares, sharesKept: spec.shares - shares } : {}),
      fills: [],
    };
  }

  let direction: Direction;
  let bought: { shares: bigint; cost: bigint; book: BookState; fills?: Fill[] };
  let budget: bigint;
  let limited: boolean | undefined;
  if (spec.mode === 'buy') {
    direction = spec.direction;
    budget = spec.amount;
    if (spec.amount < MIN_TRADE_NANO) throw tooSmall();
    if (limitP !== undefined) {
      const past = direction === 'higher' ? p0 >= limitP : p0 <= limitP;
      if (past) throw priceMoved();
      const r = walls.length ? walkBuy({ book, direction, budget: spec.amount, boundP: limitP, walls }) : buyToProbability(book, direction, limitP, spec.amount);
      limited = r.reachedTarget && r.cost < spec.amount;
      bought = r;
    } else {
      bought = walls.length ? walkBuy({ book, direction, budget: spec.amount, walls }) : buyWithSpend(book, direction, spec.amount);
    }
  } else {
    const targetP = clampP(probabilityOf(spec.targetValue, rangeMin, rangeMax));
    direction = spec.direction ?? (targetP > p0 ? 'higher' : 'lower');
    let boundP = targetP;
    if (limitP !== undefined) boundP = direction === 'higher' ? Math.min(targetP, limitP) : Math.max(targetP, limitP);
    const past = direction === 'higher' ? p0 >= boundP : p0 <= boundP;
    if (past) throw priceMoved();
    budget = spec.maxBudget;
    const r = walls.length ? walkBuy({ book, direction, budget: spec.maxBudget, boundP, walls }) : buyToProbability(book, direction, boundP, spec.maxBudget);
    limited = r.reachedTarget;
    bought = r;
  }
  if (bought.shares <= 0n || bought.cost < MIN_TRADE_NANO) throw tooSmall();

  // One net side: matched pairs are redeemed for exactly 1 credit each; the price does not move.
  // The taker's own resting orders filled by this buy add their side to its holding too.
  const fills = bought.fills ?? [];
  const own = fills.filter((f) => f.agentId === input.selfId).reduce((s, f) => s + f.shares, 0n);
  const other = direction === 'higher' ? 'lower' : 'higher';
  const held: Holding = { higher: holding.higher, lower: holding.lower };
  held[direction] += bought.shares;
  held[other] += own;
  const redeemed = minBig(held.higher, held.lower);
  // Pairs minted at walls are outside the book: it gives up only the pairs it holds.
  const fromBook = minBig(redeemed, minBig(bought.book.qHigher, bought.book.qLower));
  const bookAfter = fromBook > 0n ? redeemPairs(bought.book, fromBook) : bought.book;
  const pAfter = probability(bookAfter);
  const details =
    spec.mode === 'target' || limitP !== undefined ? { limited, spent: bought.cost, unspent: budget - bought.cost } : {};
  return {
    kind: 'buy',
    direction,
    shares: bought.shares,
    cash: bought.cost,
    redeemed,
    book: bookAfter,
    holding: { higher: held.higher - redeemed, lower: held.lower - redeemed },
    probabilityBefore: p0,
    probabilityAfter: pAfter,
    consensusBefore: c0,
    consensusAfter: consensusOf(pAfter, rangeMin, rangeMax),
    ...details,
    fills,
  };
}

function tooSmall(): DomainError {
  return new DomainError('trade_too_small', `The trade is too small: the minimum is ${formatCredits(MIN_TRADE_NANO)} credits spent or received.`, {
    minimum: MIN_TRADE_NANO,
  });
}

/** What decides whether a book takes a trade (a subset of the book row). */
export interface TradableBook {
  status: string;
  funded: boolean;
  b: bigint;
  proposalId: string | null;
  closeReason: string | null;
  tradingEndsAt: Date | null;
  voidReason: string | null;
}

/** Refusals that depend on the book's state, shared by dry runs and real trades. */
export function checkTradable(mk: TradableBook, now: Date, isSell: boolean): { sellOnly: boolean } {
  // A decided (or past-deadline) proposal's branches answer proposal_closed, voided or not (spec §3.1).
  if (mk.proposalId && (mk.closeReason === 'proposal_closed' || (mk.tradingEndsAt && mk.tradingEndsAt <= now))) {
    throw new DomainError('proposal_closed', 'The proposal was decided or its deadline passed: this branch refuses buys and sells.');
  }
  if (mk.status === 'resolved') throw new DomainError('market_resolved', 'This market has resolved and accepts no trades.');
  if (mk.status === 'voided') throw new DomainError('market_voided', `This market was voided${mk.voidReason ? ` (${mk.voidReason})` : ''} and accepts no trades.`);
  if (!mk.funded || mk.b <= 0n) {
    throw new DomainError(
      'market_unfunded',
      'This book has no liquidity yet. Anyone with trade can fund it (POST /api/predictions/markets/{marketId}/fund { credits }), or the workspace owner funds it by refreshing (POST /api/predictions/markets/refresh) once its balance covers the subsidy; retry the trade after that.',
    );
  }
  const sellOnly = mk.status === 'closed' || mk.closeReason !== null;
  if (sellOnly && !isSell) throw new DomainError('market_closed', 'This market is closed: it accepts only sells.');
  return { sellOnly };
}

/** The trade request's fields as the API takes them (credits as numbers; spec §4.5). */
export interface TradeFields {
  direction?: Direction;
  amount?: number;
  targetValue?: number;
  /** Superseded by targetValue. */
  value?: number;
  maxBudget?: number;
  sellShares?: number;
  limit?: number;
}

/** Which of the three modes the body asks for (spec §4.5), or a 400 saying how to ask. */
export function tradeSpecOf(b: TradeFields): { spec: TradeSpec; warnings: string[] } {
  const warnings: string[] = [];
  if (b.value !== undefined && b.targetValue === undefined) warnings.push("'value' is superseded by 'targetValue'; it still works.");
  const target = b.targetValue ?? b.value;
  if (b.sellShares !== undefined) {
    if (!b.direction) throw new DomainError('validation_failed', 'A sell needs direction: which side to sell, higher or lower.');
    if (target !== undefined || b.amount !== undefined) throw new DomainError('validation_failed', 'Send sellShares alone, without amount or targetValue.');
    return { spec: { mode: 'sell', direction: b.direction, shares: toNano(b.sellShares), limit: b.limit }, warnings };
  }
  if (target !== undefined) {
    const budget = b.maxBudget ?? b.amount;
    if (b.maxBudget === undefined && b.amount !== undefined) warnings.push("'amount' as the budget of a targetValue trade is superseded by 'maxBudget'; it still works.");
    if (budget === undefined) throw new DomainError('validation_failed', 'A targetValue trade needs maxBudget: the most credits it may spend.');
    if (b.limit !== undefined && !b.direction) throw new DomainError('validation_failed', 'A targetValue trade with a limit must say its direction.');
    return { spec: { mode: 'target', direction: b.direction, targetValue: target, maxBudget: toNano(budget), limit: b.limit }, warnings };
  }
  if (b.direction && b.amount !== undefined) return { spec: { mode: 'buy', direction: b.direction, amount: toNano(b.amount), limit: b.limit }, warnings };
  throw new DomainError(
    'validation_failed',
    'Say what to trade: { direction, amount } to buy, { targetValue, maxBudget } to move the price, or { direction, sellShares } to sell.',
  );
}
