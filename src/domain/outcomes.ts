/**
 * The outcomes of trade-lane jobs as data (types only): stored (trade_requests.response,
 * limit_orders.placement), carried by job results (jobs/definitions declares them), presented by
 * presenters/trade and presenters/order. Pure types in domain/ so the queue contract (jobs/definitions),
 * the books and the trading area can all name them without importing one another.
 */
import type { Direction } from './lmsr';

export type OrderStatus = 'open' | 'filled' | 'cancelled' | 'expired';

/** An order as data (JSON-safe: nano amounts as decimal strings, instants as ISO strings): how a placement is stored and a job returns it. */
export interface OrderData {
  id: string;
  marketId: string;
  workspaceId: string;
  agentId: string;
  direction: Direction;
  limit: number;
  limitP: number;
  priceNano: NanoString;
  shares: NanoString;
  filled: NanoString;
  spent: NanoString;
  reserve: NanoString;
  status: OrderStatus;
  closeReason: string | null;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Nano-units as a decimal string: how an amount is stored (jsonb) and carried by a job result (JSON). */
export type NanoString = string;

/** The resting orders a buy traded against, at their limits (nano data; presented by presenters/trade). */
export interface FillData {
  orderId: string;
  shares: NanoString;
  price: number;
  cost: NanoString;
}

/** What a trade does (or would do: a dry run), as data: amounts in nano-units. `cash` is a buy's cost or a sell's proceeds. */
export interface TradeFigures {
  marketId: string;
  kind: 'buy' | 'sell';
  direction: Direction;
  shares: NanoString;
  cash: NanoString;
  redeemed: NanoString;
  consensus: number;
  prevConsensus: number;
  probability: number;
  /** Price guard and target mode: present only when they apply. */
  limited?: boolean;
  spent?: NanoString;
  unspent?: NanoString;
  sharesSold?: NanoString;
  sharesKept?: NanoString;
  /** Buys only. */
  limitFills?: FillData[];
}

/**
 * An applied trade as stored in trade_requests.response and returned by the lane job (`v: 2`
 * marks this shape; a row journalled before it holds the presented body, which
 * presentTradeOutcome passes through as it is).
 */
export interface TradeResult extends TradeFigures {
  v: 2;
  tradeId: string;
  balance: NanoString;
  position: { direction: Direction | null; shares: NanoString };
}

/** A dry run: the trade priced, nothing written. */
export interface TradeQuote extends TradeFigures {
  dryRun: true;
  balance: NanoString;
  affordable: boolean;
  shortfall: NanoString;
  basis: { tradeCount: number; liquidity: NanoString; consensus: number | null };
}

/**
 * What a request came to: applied (its data) or refused (the error body, whose catalog code gives
 * the HTTP status at the edge). Stored (trade_requests, limit_orders.placement), returned by jobs:
 * JSON-safe, amounts as nano strings; presenters/trade turns it into credits.
 */
export type Outcome<T> = { ok: true; body: T } | { ok: false; body: Record<string, unknown> };
export type TradeOutcome = Outcome<TradeResult>;

/**
 * A placement as stored in limit_orders.placement and returned by the job (`v: 2` marks this shape;
 * a placement stored before it is the presented body, which presentPlacement passes through).
 */
export interface OrderPlacement {
  v: 2;
  order: OrderData;
  immediate: { shares: NanoString; cost: NanoString; tradeId: string | null };
}

/** A cancel's outcome: the order after it and the reserve returned. */
export interface OrderCancelled {
  v: 2;
  order: OrderData;
  returned: NanoString;
}

