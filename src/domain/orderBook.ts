// Resting buy orders as walls in front of the market maker. Pure: no I/O.
// A resting buy of one side at probability x and a taker's buy of the other side that reaches x
// form pairs minted for exactly 1 credit each (x from the order, 1 - x from the taker); the book
// moves only by what the market maker fills.
import { buyShares, buyToProbability, buyWithSpend, NANO, probability, type BookState, type Direction } from './lmsr';

export interface Wall {
  id: string;
  agentId: string;
  /** The resting order's side (the taker buys the other one). */
  direction: Direction;
  /** Its limit as p(higher). */
  p: number;
  /** What the order pays per share, nano credits (x for higher, 1 - x for lower). */
  priceNano: bigint;
  /** Shares still open and already filled (nano). */
  remaining: bigint;
  filled: bigint;
  seq: number;
}

export interface Fill {
  orderId: string;
  agentId: string;
  /** The order's side. */
  direction: Direction;
  p: number;
  shares: bigint;
  /** Paid from the order's reserve and by the taker: together exactly `shares` nano. */
  ownerPay: bigint;
  takerPay: bigint;
}

export interface WalkResult {
  shares: bigint;
  cost: bigint;
  book: BookState;
  fills: Fill[];
  /** The trade reached its bound (the limit or target), or spent its budget with no bound. */
  reachedTarget: boolean;
}

export const opposite = (d: Direction): Direction => (d === 'higher' ? 'lower' : 'higher');

/** Nano credits per share an order of `direction` at p(higher) = p pays (kept inside 1..NANO-1). */
export function ownerPriceNano(direction: Direction, p: number): bigint {
  let x = BigInt(Math.round(p * 1e9));
  if (x < 1n) x = 1n;
  if (x > NANO - 1n) x = NANO - 1n;
  return direction === 'higher' ? x : NANO - x;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** Reserve an order of `shares` at `priceNano` holds: its worst-case cost, rounded up. */
export function reserveFor(shares: bigint, priceNano: bigint): bigint {
  return ceilDiv(shares * priceNano, NANO);
}

/** The order's part of filling `s` more shares: rounded up cumulatively, so its fills sum to its reserve exactly. */
export function ownerPayFor(priceNano: bigint, filledBefore: bigint, s: bigint): bigint {
  return reserveFor(filledBefore + s, priceNano) - reserveFor(filledBefore, priceNano);
}

/** Walls a buy of `takerDir` meets, nearest first (price), then oldest first (time). */
export function wallsInOrder(walls: readonly Wall[], takerDir: Direction): Wall[] {
  const side = opposite(takerDir);
  const sgn = takerDir === 'higher' ? 1 : -1;
  return walls.filter((w) => w.direction === side && w.remaining > 0n).sort((a, b) => sgn * (a.p - b.p) || a.seq - b.seq);
}

/**
 * A buy of `direction` with `budget` (and at most `maxShares`), up to `boundP` when given, through
 * the walls in its way: the market maker fills up to each wall, the wall fills at its price, then
 * the market maker again; it stops at its bound whether a wall or the book is there.
 */
export function walkBuy(input: { book: BookState; direction: Direction; budget: bigint; boundP?: number; maxShares?: bigint; walls: readonly Wall[] }): WalkResult {
  const { direction: d, boundP } = input;
  let book = input.book;
  let budget = input.budget;
  let sharesLeft = input.maxShares ?? -1n; // -1: no cap
  let shares = 0n;
  let cost = 0n;
  const fills: Fill[] = [];
  const ahead = (x: number, p: number) => (d === 'higher' ? x > p : x < p);
  const capped = () => sharesLeft >= 0n;
  const take = (r: { shares: bigint; cost: bigint; book: BookState }) => {
    book = r.book;
    budget -= r.cost;
    cost += r.cost;
    shares += r.shares;
    if (capped()) sharesLeft -= r.shares;
  };
  /** Market maker up to x; false when the budget or the share cap ran out before x. */
  const mmTo = (x: number): boolean => {
    if (!ahead(x, probability(book))) return true;
    const r = buyToProbability(book, d, x, budget);
    if (capped() && r.shares > sharesLeft) {
      take(buyShares(book, d, sharesLeft));
      return false;
    }
    take(r);
    return r.reachedTarget;
  };
  let stopped = false;
  for (const w of wallsInOrder(input.walls, d)) {
    if (boundP !== undefined && ahead(w.p, boundP)) break;
    if (budget <= 0n || sharesLeft === 0n || !mmTo(w.p)) {
      stopped = true;
      break;
    }
    const takerPrice = NANO - w.priceNano;
    let s = (budget * NANO) / takerPrice;
    if (s > w.remaining) s = w.remaining;
    if (capped() && s > sharesLeft) s = sharesLeft;
    let ownerPay = ownerPayFor(w.priceNano, w.filled, s);
    while (s > 0n && s - ownerPay > budget) {
      s -= 1n;
      ownerPay = ownerPayFor(w.priceNano, w.filled, s);
    }
    if (s <= 0n) {
      stopped = true;
      break;
    }
    const takerPay = s - ownerPay;
    fills.push({ orderId: w.id, agentId: w.agentId, direction: w.direction, p: w.p, shares: s, ownerPay, takerPay });
    budget -= takerPay;
    cost += takerPay;
    shares += s;
    if (capped()) sharesLeft -= s;
    if (s < w.remaining) {
      stopped = true;
      break;
    }
  }
  let reachedTarget = false;
  if (!stopped && budget > 0n && sharesLeft !== 0n) {
    if (boundP !== undefined) reachedTarget = mmTo(boundP);
    else {
      const r = buyWithSpend(book, d, budget);
      take(capped() && r.shares > sharesLeft ? buyShares(book, d, sharesLeft) : r);
      reachedTarget = true;
    }
  } else if (!stopped && boundP !== undefined) {
    reachedTarget = !ahead(boundP, probability(book));
  }
  return { shares, cost, book, fills, reachedTarget };
}
