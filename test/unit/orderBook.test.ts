import fc from 'fast-check';
import { DomainError } from '../../src/errors';
import { buyToProbability, buyWithSpend, holderPayout, openBook, probability, type BookState, type Direction } from '../../src/domain/lmsr';
import { ownerPayFor, ownerPriceNano, reserveFor, walkBuy, wallsInOrder, type Wall } from '../../src/domain/orderBook';
import { planTrade, type Holding, type TradeSpec } from '../../src/domain/trading';

const NANO = 1_000_000_000n;
const dir = fc.constantFrom<Direction>('higher', 'lower');
const arbBook = fc
  .record({ liquidity: fc.integer({ min: 10, max: 10_000 }), p0: fc.double({ min: 0.05, max: 0.95, noNaN: true }) })
  .map(({ liquidity, p0 }) => openBook(BigInt(liquidity) * NANO, p0));

function wall(id: string, direction: Direction, p: number, shares: bigint, seq: number, agentId = `owner-${id}`): Wall {
  return { id, agentId, direction, p, priceNano: ownerPriceNano(direction, p), remaining: shares, filled: 0n, seq };
}

/** Walls on both sides at probabilities in (0.02, 0.98), any sizes, some at equal prices. */
const arbWalls = fc
  .array(fc.record({ direction: dir, p: fc.integer({ min: 2, max: 98 }), shares: fc.bigInt({ min: 1n, max: 200n * NANO }) }), { maxLength: 8 })
  .map((ws) => ws.map((w, i) => wall(`w${i}`, w.direction, w.p / 100, w.shares, i)));

const ahead = (d: Direction, x: number, p: number) => (d === 'higher' ? x > p : x < p);

describe('order book arithmetic', () => {
  it('prices: an order pays x for higher and 1 - x for lower, kept inside 1..NANO-1', () => {
    expect(ownerPriceNano('higher', 0.4)).toBe(400_000_000n);
    expect(ownerPriceNano('lower', 0.4)).toBe(600_000_000n);
    expect(ownerPriceNano('higher', 0)).toBe(1n);
    expect(ownerPriceNano('lower', 0)).toBe(NANO - 1n);
    expect(ownerPriceNano('higher', 1)).toBe(NANO - 1n);
  });

  it('reserves round up; fills taken in any pieces add up to the reserve exactly', () => {
    expect(reserveFor(10n * NANO, 400_000_000n)).toBe(4n * NANO);
    expect(reserveFor(1n, 400_000_000n)).toBe(1n);
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: NANO - 1n }), fc.array(fc.bigInt({ min: 1n, max: 50n * NANO }), { minLength: 1, maxLength: 10 }), (price, pieces) => {
        let filled = 0n;
        let paid = 0n;
        for (const s of pieces) {
          const pay = ownerPayFor(price, filled, s);
          expect(pay).toBeGreaterThanOrEqual(0n);
          expect(pay).toBeLessThanOrEqual(s);
          paid += pay;
          filled += s;
        }
        expect(paid).toBe(reserveFor(filled, price));
        expect(paid * NANO).toBeGreaterThanOrEqual(filled * price);
      }),
    );
  });

  it('walls are met nearest price first, then oldest first; own side and empty walls are skipped', () => {
    const ws = [wall('a', 'lower', 0.7, NANO, 1), wall('b', 'lower', 0.6, NANO, 3), wall('c', 'lower', 0.6, NANO, 2), wall('d', 'higher', 0.4, NANO, 4), { ...wall('e', 'lower', 0.55, NANO, 5), remaining: 0n }];
    expect(wallsInOrder(ws, 'higher').map((w) => w.id)).toEqual(['c', 'b', 'a']);
    expect(wallsInOrder(ws, 'lower').map((w) => w.id)).toEqual(['d']);
  });
});

describe('walkBuy', () => {
  it('with no walls it is the market maker alone', () => {
    fc.assert(
      fc.property(arbBook, dir, fc.bigInt({ min: 1000n, max: 500n * NANO }), fc.option(fc.double({ min: 0.02, max: 0.98, noNaN: true }), { nil: undefined }), (book, d, budget, boundP) => {
        const r = walkBuy({ book, direction: d, budget, boundP, walls: [] });
        const mm = boundP === undefined ? buyWithSpend(book, d, budget) : ahead(d, boundP, probability(book)) ? buyToProbability(book, d, boundP, budget) : { shares: 0n, cost: 0n, book };
        expect(r.fills).toEqual([]);
        expect({ shares: r.shares, cost: r.cost, book: r.book }).toEqual({ shares: mm.shares, cost: mm.cost, book: mm.book });
      }),
    );
  });

  it('a wall stops the price: the market maker fills up to it, the wall fills at its price, the book moves only by the market maker', () => {
    const book = openBook(100n * NANO, 0.5);
    const w = wall('w', 'higher', 0.4, 10n * NANO, 1);
    const r = walkBuy({ book, direction: 'lower', budget: 40n * NANO, walls: [w] });
    expect(r.fills).toEqual([expect.objectContaining({ orderId: 'w', shares: 10n * NANO, ownerPay: 4n * NANO, takerPay: 6n * NANO })]);
    expect(r.book.qHigher).toBe(book.qHigher);
    expect(r.shares - 10n * NANO).toBe(r.book.qLower - book.qLower);
    expect(probability(r.book)).toBeLessThan(0.4); // the budget left went on past the wall
    // A guard at the wall: stops there, the wall filled.
    const g = walkBuy({ book, direction: 'lower', budget: 40n * NANO, boundP: 0.4, walls: [w] });
    expect(g.fills).toHaveLength(1);
    expect(probability(g.book)).toBeCloseTo(0.4, 9);
    expect(g.reachedTarget).toBe(true);
    // A guard before the wall: the wall is not reached.
    expect(walkBuy({ book, direction: 'lower', budget: 40n * NANO, boundP: 0.45, walls: [w] }).fills).toEqual([]);
  });

  it('a budget that runs out inside a wall fills it partly and stops there', () => {
    const book = openBook(100n * NANO, 0.5);
    const w = wall('w', 'lower', 0.5, 100n * NANO, 1);
    const r = walkBuy({ book, direction: 'higher', budget: 5n * NANO, walls: [w] });
    expect(r.fills).toHaveLength(1);
    expect(r.fills[0].shares).toBe(10n * NANO);
    expect(r.cost).toBe(5n * NANO);
    expect(r.book).toEqual(book);
  });

  it('invariants over random books, walls, budgets, bounds and share caps', () => {
    fc.assert(
      fc.property(
        arbBook,
        arbWalls,
        dir,
        fc.bigInt({ min: 1000n, max: 300n * NANO }),
        fc.option(fc.double({ min: 0.02, max: 0.98, noNaN: true }), { nil: undefined }),
        fc.option(fc.bigInt({ min: 1n, max: 300n * NANO }), { nil: undefined }),
        (book, walls, d, budget, boundP, maxShares) => {
          const r = walkBuy({ book, direction: d, budget, boundP, maxShares, walls });
          const wallShares = r.fills.reduce((s, f) => s + f.shares, 0n);
          const takerPays = r.fills.reduce((s, f) => s + f.takerPay, 0n);
          expect(r.cost).toBeLessThanOrEqual(budget);
          if (maxShares !== undefined) expect(r.shares).toBeLessThanOrEqual(maxShares);
          // The book moves by the market maker's shares only, on the buyer's side.
          const mmShares = r.shares - wallShares;
          expect(mmShares).toBeGreaterThanOrEqual(0n);
          expect(r.book.b).toBe(book.b);
          if (d === 'higher') expect([r.book.qHigher - book.qHigher, r.book.qLower]).toEqual([mmShares, book.qLower]);
          else expect([r.book.qLower - book.qLower, r.book.qHigher]).toEqual([mmShares, book.qHigher]);
          // The market maker was paid at least its cost (rounded for the house).
          expect(r.cost - takerPays).toBeGreaterThanOrEqual(0n);
          const order = wallsInOrder(walls, d);
          const seen = new Set<string>();
          let last = -1;
          for (const f of r.fills) {
            const w = walls.find((x) => x.id === f.orderId)!;
            expect(seen.has(f.orderId)).toBe(false);
            seen.add(f.orderId);
            // Every pair is minted for exactly 1 credit; no order fills past its size or its price.
            expect(f.ownerPay + f.takerPay).toBe(f.shares);
            expect(f.ownerPay).toBe(ownerPayFor(w.priceNano, w.filled, f.shares));
            expect(f.shares).toBeGreaterThan(0n);
            expect(f.shares).toBeLessThanOrEqual(w.remaining);
            expect(f.direction).not.toBe(d);
            if (boundP !== undefined) expect(ahead(d, w.p, boundP)).toBe(false);
            // Price-time priority: fills follow the walls' order without skipping one.
            const i = order.findIndex((x) => x.id === f.orderId);
            expect(i).toBe(last + 1);
            last = i;
          }
          // Only the last wall met may be partly filled.
          r.fills.slice(0, -1).forEach((f) => expect(f.shares).toBe(walls.find((x) => x.id === f.orderId)!.remaining));
          // The market maker never moves the book past a bound (beyond its rounding of one share).
          if (boundP !== undefined && mmShares > 0n) expect(d === 'higher' ? probability(r.book) - boundP : boundP - probability(r.book)).toBeLessThan(1e-6);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * A whole market in the domain: walls, buys through them, sells (also of wall shares, past what
 * the book holds), with the pool, the reserve and every holding tracked in nano. After every step
 * the pool covers every holder whatever the outcome, and no order fills past its size.
 */
describe('a market of walls, buys and sells', () => {
  type Op =
    | { t: 'wall'; who: number; direction: Direction; p: number; shares: bigint }
    | { t: 'buy'; who: number; direction: Direction; amount: bigint; limit?: number }
    | { t: 'sell'; who: number; direction: Direction; part: number };
  const who = fc.integer({ min: 0, max: 2 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ t: fc.constant('wall' as const), who, direction: dir, p: fc.integer({ min: 5, max: 95 }).map((x) => x / 100), shares: fc.bigInt({ min: NANO / 10n, max: 50n * NANO }) }),
    fc.record({ t: fc.constant('buy' as const), who, direction: dir, amount: fc.bigInt({ min: NANO / 10n, max: 80n * NANO }), limit: fc.option(fc.integer({ min: 10, max: 990 }), { nil: undefined }) }),
    fc.record({ t: fc.constant('sell' as const), who, direction: dir, part: fc.double({ min: 0.1, max: 1, noNaN: true }) }),
  );

  it('no nano created or lost; the pool covers every outcome; fills never pass an order size', () => {
    const seen = { runs: 0, trades: 0, accepted: 0, fills: 0 };
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 500 }), fc.double({ min: 0.1, max: 0.9, noNaN: true }), fc.array(op, { minLength: 1, maxLength: 30 }), (liq, p0, ops) => {
        seen.runs++;
        const L = BigInt(liq) * NANO;
        let book: BookState = openBook(L, p0);
        let pool = L;
        const cash = [1000n * NANO, 1000n * NANO, 1000n * NANO];
        const total0 = pool + cash.reduce((a, b) => a + b, 0n);
        const held: Holding[] = [0, 1, 2].map(() => ({ higher: 0n, lower: 0n }));
        const walls: Array<Wall & { size: bigint; reserve: bigint }> = [];
        let seq = 0;
        for (const o of ops) {
          if (o.t === 'wall') {
            const p = probability(book);
            if (o.direction === 'higher' ? o.p >= p : o.p <= p) continue; // crossed orders trade first (service side)
            const w = wall(`w${seq}`, o.direction, o.p, o.shares, seq++, `a${o.who}`);
            const reserve = reserveFor(o.shares, w.priceNano);
            if (reserve > cash[o.who]) continue;
            cash[o.who] -= reserve;
            walls.push({ ...w, size: o.shares, reserve });
            continue;
          }
          const holding = held[o.who];
          let spec: TradeSpec;
          if (o.t === 'buy') spec = { mode: 'buy', direction: o.direction, amount: o.amount > cash[o.who] ? cash[o.who] : o.amount, limit: o.limit };
          else {
            const have = o.direction === 'higher' ? holding.higher : holding.lower;
            const shares = o.part >= 0.95 ? have : BigInt(Math.floor(Number(have) * o.part));
            if (shares <= 0n) continue;
            spec = { mode: 'sell', direction: o.direction, shares };
          }
          seen.trades++;
          let plan;
          try {
            plan = planTrade({ book, rangeMin: 0, rangeMax: 1000, holding, spec, sellOnly: false, walls: walls.filter((w) => w.remaining > 0n), selfId: `a${o.who}` });
          } catch (err) {
            expect(err).toBeInstanceOf(DomainError);
            continue;
          }
          seen.accepted++;
          seen.fills += plan.fills.length;
          if (plan.kind === 'buy') {
            cash[o.who] -= plan.cash;
            pool += plan.cash;
          } else {
            cash[o.who] += plan.cash;
            pool -= plan.cash;
          }
          for (const f of plan.fills) {
            const w = walls.find((x) => x.id === f.orderId)!;
            w.remaining -= f.shares;
            w.filled += f.shares;
            w.reserve -= f.ownerPay;
            pool += f.ownerPay;
            const owner = Number(f.agentId.slice(1));
            if (owner !== o.who) {
              held[owner][f.direction] += f.shares;
              const r = held[owner].higher < held[owner].lower ? held[owner].higher : held[owner].lower;
              held[owner].higher -= r;
              held[owner].lower -= r;
              pool -= r;
              cash[owner] += r;
            }
          }
          pool -= plan.redeemed;
          cash[o.who] += plan.redeemed;
          held[o.who] = plan.holding;
          book = plan.book;
          // Checks after every step.
          expect(book.qHigher).toBeGreaterThanOrEqual(0n);
          expect(book.qLower).toBeGreaterThanOrEqual(0n);
          cash.forEach((c) => expect(c).toBeGreaterThanOrEqual(0n));
          expect(pool).toBeGreaterThanOrEqual(0n);
          for (const w of walls) {
            expect(w.filled).toBeLessThanOrEqual(w.size);
            expect(w.reserve).toBeGreaterThanOrEqual(0n);
            if (w.remaining === 0n) expect(w.reserve).toBe(0n);
          }
          const reserves = walls.reduce((s, w) => s + w.reserve, 0n);
          expect(pool + reserves + cash.reduce((a, b) => a + b, 0n)).toBe(total0);
          for (const v of [0, 0.37, 1]) {
            const owed = held.reduce((s, h) => s + holderPayout(h.higher, h.lower, v), 0n);
            expect(owed).toBeLessThanOrEqual(pool);
          }
        }
      }),
      { numRuns: 200 },
    );
    // Refused trades are skipped, so the property holds vacuously if planTrade refuses everything:
    // count the trades that went through and the wall fills among them (measured over 8 seeds:
    // 246-317 trades accepted of 406-487 tried, 10-29 wall fills, in 200 runs).
    expect(seen.runs).toBe(200);
    expect(seen.accepted).toBeGreaterThanOrEqual(200);
    expect(seen.fills).toBeGreaterThanOrEqual(4);
  });
});
